/** Structured fields attached to a log line. */
export type LogFields = Record<string, unknown>;

/** A scoped logger. Collaborators receive one through their constructor. */
export interface Logger {
  /** The scope the logger writes under. */
  readonly scope: string;
  /** Logs at debug level. */
  debug(msg: string, fields?: LogFields): void;
  /** Logs at info level. */
  info(msg: string, fields?: LogFields): void;
  /** Logs at warn level. */
  warn(msg: string, fields?: LogFields): void;
  /** Logs at error level. */
  error(msg: string, fields?: LogFields): void;
  /** Logs at fatal level; the caller decides how to exit. */
  fatal(msg: string, fields?: LogFields): void;
  /** True when `debug` lines of this scope are written, to skip building costly fields. */
  readonly debugEnabled: boolean;
}

/** A logger that drops everything, for tests and library defaults. */
export const silentLogger: Logger = Object.freeze({
  scope: "silent",
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  debugEnabled: false,
});

/** A logger that adds `fields` to every line of `logger` (a line's own fields win). */
export function withFields(logger: Logger, fields: LogFields): Logger {
  return {
    scope: logger.scope,
    debug: (msg, own) => logger.debug(msg, { ...fields, ...own }),
    info: (msg, own) => logger.info(msg, { ...fields, ...own }),
    warn: (msg, own) => logger.warn(msg, { ...fields, ...own }),
    error: (msg, own) => logger.error(msg, { ...fields, ...own }),
    fatal: (msg, own) => logger.fatal(msg, { ...fields, ...own }),
    get debugEnabled() {
      return logger.debugEnabled;
    },
  };
}
