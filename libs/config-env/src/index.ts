/**
 * `@lease-fence/config-env`: the zod helpers the lease-fence processes share to parse their
 * environment variables (defaults for unset or blank values, integers with a unit and a range,
 * required values, `LOG_LEVEL`, the namespace) and the error naming every offending variable.
 *
 * @packageDocumentation
 */
/** The environment helpers, the log levels and the configuration error (documented in env.ts). */
export {
  EnvConfigError,
  envInteger,
  envIssuesOf,
  envLogLevel,
  envNamespace,
  envRequired,
  envText,
  isUnset,
  LOG_LEVELS,
  type EnvIssue,
  type LogLevel,
} from './env.js';
