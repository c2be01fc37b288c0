/**
 * The exit codes of `lease-fence`, and the error that carries one. They follow sysexits(3) where
 * it has a fitting code, and `timeout(1)` / `env(1)` for a command that cannot be started, so
 * scripts can tell them apart; they never change between versions. Documented in `--help` and in
 * the package README.
 */

/** Every exit code `lease-fence` itself chooses (a command run by `lease-fence run` passes its own through). */
export const EXIT = {
  /** Success (for `run`: the command exited 0). */
  ok: 0,
  /** A bad flag, argument or setting (EX_USAGE), refused before it was sent or by the coordinator (a `--ttl` past its bounds, a `--url` that is not its base URL); nothing was done. */
  usage: 64,
  /** A defect of `lease-fence` itself (EX_SOFTWARE): the message has the stack; please report it. */
  internal: 70,
  /** The coordinator could not be reached, or answered 503 through every retry (EX_UNAVAILABLE). */
  coordinatorUnavailable: 69,
  /** The resource was held by another holder past `--wait` (EX_TEMPFAIL: try again later). */
  resourceHeld: 75,
  /** The coordinator answered something the protocol does not allow (EX_PROTOCOL). */
  protocol: 76,
  /** The token was refused (401), or its role may not do this (403, or an agent token needed) (EX_NOPERM). */
  tokenRefused: 77,
  /**
   * `run` only: the lease was lost while the command ran (renewals refused, or the coordinator
   * unreachable until the lease's deadline), so the command was stopped (SIGTERM, then SIGKILL).
   */
  leaseLost: 79,
  /** `run` only: the command was found but could not be executed (as in `env(1)`). */
  commandNotExecutable: 126,
  /** `run` only: the command was not found (as in `env(1)`). */
  commandNotFound: 127,
} as const;

/** The names of {@link EXIT}'s codes. */
export type ExitCodeName = keyof typeof EXIT;

/**
 * An error `lease-fence` reports on stderr (its message, one line where possible) before exiting
 * with `exitCode`. Everything the command line refuses or cannot do ends in one of these.
 */
export class CliError extends Error {
  /**
   * @param exitCode - One of {@link EXIT}'s codes.
   * @param message - What went wrong, naming the flag, the setting or the coordinator's URL.
   */
  constructor(
    readonly exitCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** A bad flag, argument or setting: exit {@link EXIT.usage} (64). */
export class UsageError extends CliError {
  /** @param message - Names the flag (and its environment variable, when it has one) and what is wrong. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(EXIT.usage, message, options);
    this.name = 'UsageError';
  }
}

/** The exit-codes table for `--help`, one line per code. */
export const EXIT_CODES_HELP = `Exit codes:
  0     success
  64    a bad flag, argument or setting (nothing was done)
  69    the coordinator is unreachable or unavailable (its URL and what failed are printed)
  70    an internal error of lease-fence (please report it)
  75    the resource is held by another holder (past --wait, for run)
  76    the coordinator's reply does not match the protocol
  77    the token was refused, or its role may not do this
  79    run: the lease was lost while the command ran; the command was stopped
  126   run: the command could not be executed
  127   run: the command was not found
  128+N run: the command died of signal N
  other run: the command's own exit code`;
