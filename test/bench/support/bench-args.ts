/**
 * The command line of a benchmark script: node's `parseArgs` (strict: no positionals, no unknown
 * options) with `--help`, and a bad option refused in one line that names it, followed by the
 * usage, exit 2, instead of `parseArgs`' stack trace. Hand-written because it only adapts
 * `node:util`'s parser to the bench scripts' output (a flag library would be a second parser).
 */
import { parseArgs } from 'node:util';

/** The options table `parseArgs` takes (`--name` → type, default, multiple). */
export type BenchOptions = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

/** What {@link parseBenchArgs} returns for the options table `O`: `parseArgs`' own typing of its values. */
export type BenchValues<O extends BenchOptions> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>
>['values'];

/** `--name <default>` for each option: the one usage line of a script. */
function usageOf(bench: string, options: BenchOptions): string {
  const flags = Object.entries(options).map(([name, option]) => {
    if (option.type === 'boolean') return `[--${name}]`;
    const value = Array.isArray(option.default) || option.default === undefined ? '<value>' : String(option.default);
    return `[--${name} ${value}]${option.multiple === true ? '…' : ''}`;
  });
  return [
    `usage: npm run bench:${bench} -- ${flags.join(' ')}`,
    `What each option does: the header of test/bench/bench-${bench}.ts (shown values are the defaults).`,
  ].join('\n');
}

/**
 * Parses `process.argv` for the benchmark `bench` (its `npm run bench:<bench>` name).
 * `--help` / `-h` prints the usage and exits 0; an unknown option, a missing value or a
 * positional argument prints `bench:<bench>: <what is wrong>` and the usage, and exits 2.
 *
 * @param bench - The script's name after `bench:` (e.g. `recovery`, `dashboard-scene`).
 * @param options - The options table, as `parseArgs` takes it.
 * @returns The parsed values, typed as `parseArgs` types them.
 */
export function parseBenchArgs<const O extends BenchOptions>(bench: string, options: O): BenchValues<O> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usageOf(bench, options));
    process.exit(0);
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    console.error(`bench:${bench}: ${(error as Error).message}\n${usageOf(bench, options)}`);
    process.exit(2);
  }
}
