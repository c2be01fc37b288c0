/**
 * `lease-fence run --resource R [--ttl 30s] [--wait 0s] [--grace 10s] -- <command> [args…]`: runs a
 * command while holding a lease, the way `flock(1)` runs one under a lock, with fencing: the
 * command gets the lease's fence and signed token in its environment to pass to the resource.
 *
 * Lifecycle: acquire (retrying while the resource is held, up to `--wait`), start the command in a
 * process group of its own, keep the lease renewed with the SDK's {@link LeaseKeeper} (the one
 * renewal loop), and release when the command ends. If the lease is lost first, the whole group
 * gets SIGTERM, then SIGKILL after `--grace`, and `run` exits 79. SIGINT, SIGTERM and SIGHUP sent
 * to `run` are passed to the group.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AcquireDenial, Lease, LeaseKeeper, LeaseLostError } from '@lease-fence/client';
import { formatDuration } from '@lease-fence/dashboard-model';
import { LeasesReplySchema } from '@lease-fence/protocol';
import { Command } from 'commander';
import { type CliIo, warn } from '../cli-io.js';
import {
  addConnectionOptions,
  type AgentConnection,
  connectionSettingsOf,
  coordinatorHttp,
  openAgentConnection,
  toCliError,
} from '../connection.js';
import { CliError, EXIT, EXIT_CODES_HELP, UsageError } from '../exit-codes.js';
import { durationFlag, resourceFlag } from '../flags.js';

/** The signals `run` passes to the command's process group. */
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

/**
 * Longest pause between two acquire attempts while waiting for a held resource, in milliseconds.
 * The coordinator's `retryAfterMillis` is when the holder's lease would expire; a holder that
 * releases early is noticed within this.
 */
const MAX_POLL_MILLIS = 1_000;

/**
 * Longest wait for the release when the command has ended, in milliseconds: one attempt's worth of
 * the SDK's default timeout, so a coordinator that does not answer cannot hold `run` for all retries.
 */
const RELEASE_WAIT_MILLIS = 5_000;

/** Options of `run`, as commander parses them. */
interface RunFlags {
  readonly resource: string;
  readonly ttl: string;
  readonly wait: string;
  readonly grace: string;
}

const HELP = `
The command runs with these variables added to its environment:
  LEASE_FENCE_RESOURCE  the resource
  LEASE_FENCE_FENCE     the lease's fence (a number; higher = newer holder)
  LEASE_FENCE_HOLDER    the holder id the token is bound to
  LEASE_FENCE_TOKEN     the coordinator's signed grant: send it with every write to the
                        resource (e.g. the Lease-Fence-Token header of lease-fence-gate)

The lease is renewed in the background. If it is lost before the command ends (renewals
refused, or the coordinator unreachable until the lease's deadline), the command and every
process it started get SIGTERM, then SIGKILL after --grace, and run exits 79. The command runs
in a process group of its own: SIGINT (Ctrl-C), SIGTERM and SIGHUP sent to run are passed to it.
When the command ends the lease is released. If run itself is killed with SIGKILL, the command
keeps running unfenced by run: its lease expires after --ttl and the resource's gate refuses
its later writes.

Examples:
  $ export LEASE_FENCE_URL=http://127.0.0.1:3000 LEASE_FENCE_AGENT_TOKEN_FILE=~/.lease-fence/agent.token
  $ lease-fence run --resource deploy-slot-a -- ./deploy.sh production
  $ lease-fence run --resource nightly-report --ttl 2m --wait 10m -- node report.js
  $ lease-fence run -r db-migrations -- sh -c 'migrate --fence "$LEASE_FENCE_FENCE"'

${EXIT_CODES_HELP}`;

/** The `run` subcommand. */
export function runCommand(io: CliIo): Command {
  const command = new Command('run')
    .summary('run a command while holding a lease on a resource')
    .description(
      'Acquire a lease on a resource (waiting up to --wait while another holder has it), run a command with the fence and the signed token in its environment while the lease is renewed, stop the command if the lease is lost, and release the lease when it ends. Exits with the command’s exit code.',
    )
    .requiredOption('-r, --resource <resource>', 'the resource to lease (1–200 printable ASCII characters)')
    .option('--ttl <duration>', 'the lease’s time to live; renewed halfway through', '30s')
    .option('--wait <duration>', 'how long to keep trying while another holder has the resource', '0s')
    .option('--grace <duration>', 'after a lost lease, time between SIGTERM and SIGKILL', '10s')
    .argument('<command>', 'the command to run')
    .argument('[args...]', 'its arguments (put -- before the command so its own flags reach it)')
    .passThroughOptions()
    // With passThroughOptions a flag after the command is the command's: `run echo hi -r x` says
    // only that -r is missing, which the user typed.
    .showHelpAfterError(
      "run's options go before the command, and everything after it is the command's: lease-fence run -r deploy-slot-a --ttl 30s -- ./deploy.sh production",
    );
  addConnectionOptions(command).addHelpText('after', HELP);
  command.action(async (program: string, args: string[], flags: RunFlags, self: Command) => {
    io.exitCode = await runUnderLease(io, self, program, args, flags);
  });
  return command;
}

async function runUnderLease(
  io: CliIo,
  self: Command,
  program: string,
  args: readonly string[],
  flags: RunFlags,
): Promise<number> {
  const settings = connectionSettingsOf(self);
  const resource = resourceFlag('--resource', flags.resource);
  const ttlMillis = durationFlag('--ttl', flags.ttl);
  const waitMillis = durationFlag('--wait', flags.wait);
  const graceMillis = durationFlag('--grace', flags.grace);
  if (ttlMillis <= settings.clockSkewMillis) {
    throw new UsageError(
      `--ttl: must be longer than the clock skew (${formatDuration(settings.clockSkewMillis)}, --clock-skew), got ${flags.ttl}`,
    );
  }

  // Signals that arrive before the command runs stop the acquisition; later ones go to the command.
  const interrupted = new AbortController();
  let received: ForwardedSignal | undefined;
  let child: ChildProcess | undefined;
  const onSignal = (signal: ForwardedSignal): void => {
    received ??= signal;
    if (child === undefined) interrupted.abort(signal);
    else signalGroup(child, signal);
  };
  const handlers = FORWARDED_SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  try {
    let agent: AgentConnection;
    let lease: Lease;
    try {
      agent = await openAgentConnection(settings, 'lease-fence run', interrupted.signal);
      const acquired = await acquireWithin(io, agent, resource, ttlMillis, waitMillis, interrupted.signal);
      if (!acquired.ok) throw await heldError(agent, resource, waitMillis, acquired);
      lease = acquired.lease;
    } catch (error) {
      if (interrupted.signal.aborted && received !== undefined) return 128 + constants.signals[received];
      throw toCliError(error, settings, { ttlMillis: '--ttl' });
    }

    const keeper = agent.client.keep(lease, { ttlMillis, ...renewalReports(io, lease) });
    try {
      child = spawn(program, args, {
        stdio: 'inherit',
        // A process group (and session) of its own: a lost lease stops everything the command started.
        detached: true,
        env: {
          ...process.env,
          LEASE_FENCE_RESOURCE: lease.resource,
          LEASE_FENCE_FENCE: String(lease.fence),
          LEASE_FENCE_HOLDER: lease.holderId,
          LEASE_FENCE_TOKEN: lease.signedToken,
        },
      });
      if (received !== undefined) signalGroup(child, received);
      const ended = await superviseUntilExit(io, child, keeper, graceMillis);
      if (ended.kind === 'not-started') return ended.exitCode;
      if (ended.lost !== undefined) return EXIT.leaseLost;
      if (ended.signal !== null) return 128 + constants.signals[ended.signal];
      return ended.code ?? 0;
    } finally {
      await releaseQuietly(io, keeper);
    }
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

/**
 * Acquires `resource`, trying again while it is held (or in its lock-delay) until `waitMillis`
 * have passed. A new requestId each attempt: each is a new intent.
 */
async function acquireWithin(
  io: CliIo,
  agent: AgentConnection,
  resource: string,
  ttlMillis: number,
  waitMillis: number,
  signal: AbortSignal,
): Promise<{ ok: true; lease: Lease } | AcquireDenial> {
  const startedAt = performance.now();
  let announced = false;
  for (;;) {
    const result = await agent.client.acquire(resource, { ttlMillis, signal });
    if (result.ok) return result;
    const leftMillis = waitMillis - (performance.now() - startedAt);
    if (leftMillis <= 0) return result;
    const hintMillis = 'retryAfterMillis' in result ? result.retryAfterMillis : 0;
    if (!announced && (result.reason === 'held' || result.reason === 'already-held')) {
      warn(io, `${resource} is held by ${result.heldBy}; waiting up to ${formatDuration(leftMillis)} (--wait)`);
      announced = true;
    }
    await sleep(Math.max(1, Math.min(hintMillis, MAX_POLL_MILLIS, leftMillis)), undefined, { signal });
  }
}

/** The exit-75 error for a resource still held after `--wait`: who holds it, its fence, and for how long. */
async function heldError(
  agent: AgentConnection,
  resource: string,
  waitMillis: number,
  denial: AcquireDenial,
): Promise<CliError> {
  const waited = `gave up after --wait ${formatDuration(waitMillis)}`;
  switch (denial.reason) {
    case 'held': {
      const fence = await currentFence(agent, resource);
      return new CliError(
        EXIT.resourceHeld,
        `${resource} is held by ${denial.heldBy}${fence === undefined ? '' : ` under fence ${fence}`} for up to ${formatDuration(denial.retryAfterMillis)} more (unless released sooner); ${waited}`,
      );
    }
    case 'already-held':
      return new CliError(
        EXIT.resourceHeld,
        `${resource} is already held by this token's holder ${denial.heldBy} under fence ${denial.fence} (another process using the same token?) for up to ${formatDuration(denial.retryAfterMillis)} more; ${waited}`,
      );
    case 'lock-delay':
      return new CliError(
        EXIT.resourceHeld,
        `${resource} is in its lock-delay after its previous holder was lost; it can be acquired in ${formatDuration(denial.retryAfterMillis)}; ${waited}`,
      );
    case 'expired':
    case 'dead-on-arrival':
      return new CliError(
        EXIT.resourceHeld,
        `${resource}: the grant arrived too late to be used (${denial.reason}); check the clock skew (--clock-skew) and the network; ${waited}`,
      );
  }
}

/** The fence of `resource`'s current holder, from `GET /v1/leases`; undefined when that read fails. */
async function currentFence(agent: AgentConnection, resource: string): Promise<number | undefined> {
  try {
    const { value } = await coordinatorHttp(agent).get('list leases', '/v1/leases', { 200: LeasesReplySchema });
    return value.leases.find((lease) => lease.resource === resource)?.fence;
  } catch {
    return undefined; // only the message loses the fence
  }
}

/** Warnings for renewals that fail, and for the first success after a failure. */
function renewalReports(io: CliIo, lease: Lease): { onRenewalError: (error: unknown) => void; onRenewed: () => void } {
  let failing = false;
  return {
    onRenewalError: (error) => {
      if (failing) return;
      failing = true;
      const message = error instanceof Error ? error.message : String(error);
      warn(
        io,
        `renewing ${lease.resource} (fence ${lease.fence}) failed: ${message}; retrying until the lease's deadline`,
      );
    },
    onRenewed: () => {
      if (!failing) return;
      failing = false;
      warn(io, `renewed ${lease.resource} (fence ${lease.fence}) again`);
    },
  };
}

/** How the command ended. */
type Ended =
  | { readonly kind: 'not-started'; readonly exitCode: number }
  | {
      readonly kind: 'exited';
      readonly code: number | null;
      readonly signal: NodeJS.Signals | null;
      /** Set when the lease was lost while the command ran (it was then stopped). */
      readonly lost: LeaseLostError | undefined;
    };

/**
 * Waits for the command to end. If the lease is lost first, the command's group gets SIGTERM, then
 * SIGKILL after `graceMillis`; `run` waits until the group is gone (or SIGKILL was sent) so nothing
 * it started keeps writing after `run` reports the loss.
 */
async function superviseUntilExit(
  io: CliIo,
  child: ChildProcess,
  keeper: LeaseKeeper,
  graceMillis: number,
): Promise<Ended> {
  const exit = new Promise<Ended>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      const notFound = error.code === 'ENOENT';
      warn(io, `cannot run ${JSON.stringify(child.spawnfile)}: ${notFound ? 'not found' : error.message}`);
      resolve({ kind: 'not-started', exitCode: notFound ? EXIT.commandNotFound : EXIT.commandNotExecutable });
    });
    child.once('exit', (code, signal) => resolve({ kind: 'exited', code, signal, lost: keeper.lost }));
  });
  let killTimer: NodeJS.Timeout | undefined;
  let stopped: Promise<void> | undefined;
  const onLost = (): void => {
    const lost = keeper.lost;
    if (lost === undefined || child.pid === undefined) return;
    warn(
      io,
      `lost the lease on ${lost.resource} (fence ${lost.fence}): ${describeLoss(lost)}; stopping the command (SIGTERM, then SIGKILL after ${formatDuration(graceMillis)})`,
    );
    signalGroup(child, 'SIGTERM');
    stopped = new Promise((resolve) => {
      let settled = false;
      const settle = (): void => {
        settled = true;
        resolve();
      };
      killTimer = setTimeout(() => {
        signalGroup(child, 'SIGKILL');
        settle();
      }, graceMillis);
      void exit.then(() => waitForGroupGone(child, () => settled, settle));
    });
  };
  keeper.signal.addEventListener('abort', onLost, { once: true });
  if (keeper.signal.aborted) onLost();
  try {
    const ended = await exit;
    if (stopped !== undefined) await stopped;
    return ended;
  } finally {
    keeper.signal.removeEventListener('abort', onLost);
    clearTimeout(killTimer);
  }
}

/** Why a lease was lost, in words. */
const describeLoss = (lost: LeaseLostError): string => {
  switch (lost.reason) {
    case 'expired':
      return 'the coordinator says it expired';
    case 'not-holder':
      return 'the coordinator says this holder no longer holds it';
    case 'deadline-passed':
      return "no renewal succeeded before the lease's deadline (coordinator unreachable?)";
    case 'dead-on-arrival':
      return 'a renewal arrived after the deadline it would have set';
    case 'released':
      return 'released';
  }
};

/** Sends `signal` to the child's process group (its PID is the group's id); ignores a group that is gone. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone
  }
}

/**
 * Calls `done` once no process of the child's group is left, checked every 50 ms (Node has no event
 * for the end of a process group), unless `cancelled()` first.
 */
function waitForGroupGone(child: ChildProcess, cancelled: () => boolean, done: () => void): void {
  const check = (): void => {
    if (cancelled()) return;
    try {
      process.kill(-(child.pid as number), 0);
    } catch {
      done();
      return;
    }
    setTimeout(check, 50);
  };
  check();
}

/**
 * Releases the lease, waiting at most {@link RELEASE_WAIT_MILLIS}. A release that fails or does not
 * finish in time is reported, never fatal: the lease then expires after its TTL.
 */
async function releaseQuietly(io: CliIo, keeper: LeaseKeeper): Promise<void> {
  const lease = keeper.lease;
  const gaveUp = new AbortController();
  let problem: string | undefined;
  try {
    const outcome = await Promise.race([
      keeper.release(),
      sleep(RELEASE_WAIT_MILLIS, 'timeout' as const, { signal: gaveUp.signal }),
    ]);
    if (outcome === 'timeout') problem = `no answer within ${formatDuration(RELEASE_WAIT_MILLIS)}`;
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  } finally {
    gaveUp.abort();
  }
  if (problem !== undefined) {
    warn(
      io,
      `could not release ${lease.resource} (fence ${lease.fence}): ${problem}; it expires after its TTL (${formatDuration(lease.ttlMillis)})`,
    );
  }
}
