import {
  ALL_SCOPES,
  DEFAULT_SCOPE,
  type Level,
  levelRank,
  parseScopeLevels,
  parseScopeList,
} from "./levels.ts";
import type { LogFields, Logger } from "./logger.ts";
import { RotatingFileSink } from "./rotating_file_sink.ts";
import { type LogSink, sinkForTarget } from "./sinks.ts";

/** The logging flags of both programs, as given on the command line. */
export interface LogFlags {
  /** `--log_as_json`: one JSON object per line instead of tab-separated text. */
  readonly log_as_json: boolean;
  /** `--log_caller`: comma-separated scopes (or `all`) whose records carry the calling source location. */
  readonly log_caller: string;
  /** `--log_output_level`: `<scope>:<level>,…`, the least severe level written per scope. */
  readonly log_output_level: string;
  /** `--log_rotate`: path of an extra rotating log file; empty means none. */
  readonly log_rotate: string;
  /** `--log_rotate_max_age`: age in days after which the file is rotated; 0 means no limit. */
  readonly log_rotate_max_age: number;
  /** `--log_rotate_max_backups`: rotated files kept before the oldest are deleted; 0 means no limit. */
  readonly log_rotate_max_backups: number;
  /** `--log_rotate_max_size`: size in megabytes after which the file is rotated. */
  readonly log_rotate_max_size: number;
  /**
   * `--log_stacktrace_level`: `<scope>:<level>,…`, the least severe level that carries a stack trace per
   * scope.
   */
  readonly log_stacktrace_level: string;
  /** `--log_target`: paths written to, or `stdout` / `stderr`. */
  readonly log_target: readonly string[];
}

/** One emitted log record, before formatting. */
export interface LogRecord {
  /** When the record was emitted. */
  readonly time: Date;
  /** Severity of the record. */
  readonly level: Level;
  /** Scope of the logger that emitted it. */
  readonly scope: string;
  /** The message, without its fields. */
  readonly msg: string;
  /** Structured fields, written after the message in order. */
  readonly fields?: LogFields;
  /** Source location of the caller (`dir/file.ts:line:col`), when the scope logs callers. */
  readonly caller?: string;
  /** Stack frames, one per line, when the level reaches the scope's stack-trace level. */
  readonly stack?: string;
}

/**
 * Owns the scopes of one program, their output and stack-trace levels, and the sinks. Levels can be changed
 * while running (the introspection facility does so); loggers read them on every call.
 */
export class LogManager {
  readonly #scopes: readonly string[];
  readonly #output = new Map<string, Level>();
  readonly #stacktrace = new Map<string, Level>();
  readonly #caller: Set<string>;
  readonly #json: boolean;
  readonly #sinks: LogSink[];
  readonly #loggers = new Map<string, Logger>();

  /** Validates the flags against `scopes`; throws RangeError naming the flag on a bad scope or level. */
  constructor(
    scopes: readonly string[],
    flags: LogFlags,
    options: { sinks?: LogSink[]; now?: () => Date } = {},
  ) {
    this.#scopes = scopes;
    this.now = options.now ?? (() => new Date());
    for (const scope of scopes) {
      this.#output.set(scope, "info");
      this.#stacktrace.set(scope, "none");
    }
    this.#apply(this.#output, parseScopeLevels(flags.log_output_level, scopes, "--log_output_level"));
    this.#apply(
      this.#stacktrace,
      parseScopeLevels(flags.log_stacktrace_level, scopes, "--log_stacktrace_level"),
    );
    this.#caller = parseScopeList(flags.log_caller, scopes, "--log_caller");
    if (this.#caller.has(ALL_SCOPES)) scopes.forEach((s) => this.#caller.add(s));
    this.#json = flags.log_as_json;
    this.#sinks = options.sinks ?? [
      ...flags.log_target.map(sinkForTarget),
      ...(flags.log_rotate
        ? [
          new RotatingFileSink(flags.log_rotate, {
            maxSizeMb: flags.log_rotate_max_size,
            maxAgeDays: flags.log_rotate_max_age,
            maxBackups: flags.log_rotate_max_backups,
          }),
        ]
        : []),
    ];
  }

  private readonly now: () => Date;

  /** The logger of `scope`; throws RangeError for a scope this program does not declare. */
  scope(name: string): Logger {
    if (!this.#scopes.includes(name)) {
      throw new RangeError(`Unknown log scope "${name}"; expected one of ${this.#scopes.join(", ")}`);
    }
    let logger = this.#loggers.get(name);
    if (!logger) {
      logger = this.#makeLogger(name);
      this.#loggers.set(name, logger);
    }
    return logger;
  }

  /** Sets the output level of one scope (or `all`) at runtime. */
  setLevel(scope: string, level: Level): void {
    this.#apply(this.#output, parseScopeLevels(`${scope}:${level}`, this.#scopes, "log level"));
  }

  /** Sets the stack-trace level of one scope (or `all`) at runtime. */
  setStacktraceLevel(scope: string, level: Level): void {
    this.#apply(this.#stacktrace, parseScopeLevels(`${scope}:${level}`, this.#scopes, "stack trace level"));
  }

  /** Turns caller information on or off for one scope (or `all`) at runtime. */
  setCallers(scope: string, enabled: boolean): void {
    const targets = scope === ALL_SCOPES ? this.#scopes : [this.scope(scope).scope];
    for (const s of targets) enabled ? this.#caller.add(s) : this.#caller.delete(s);
  }

  /** Every scope with its output and stack-trace level, for introspection. */
  levels(): Array<{ scope: string; outputLevel: Level; stackTraceLevel: Level; logCallers: boolean }> {
    return this.#scopes.filter((s) => s !== ALL_SCOPES).map((scope) => ({
      scope,
      outputLevel: this.#output.get(scope)!,
      stackTraceLevel: this.#stacktrace.get(scope)!,
      logCallers: this.#caller.has(scope),
    }));
  }

  /** Closes file sinks. */
  close(): void {
    for (const sink of this.#sinks) sink.close();
  }

  #apply(target: Map<string, Level>, levels: Map<string, Level>): void {
    for (const [scope, level] of levels) {
      if (scope === ALL_SCOPES) this.#scopes.forEach((s) => target.set(s, level));
      else target.set(scope, level);
    }
  }

  #enabled(scope: string, level: Level): boolean {
    const min = this.#output.get(scope) ?? this.#output.get(DEFAULT_SCOPE) ?? "info";
    return min !== "none" && levelRank(level) >= levelRank(min);
  }

  #emit(scope: string, level: Level, msg: string, fields?: LogFields): void {
    if (!this.#enabled(scope, level)) return;
    const traceMin = this.#stacktrace.get(scope) ?? "none";
    const wantStack = traceMin !== "none" && levelRank(level) >= levelRank(traceMin);
    const frames = wantStack || this.#caller.has(scope) ? callerFrames() : [];
    const record: LogRecord = {
      time: this.now(),
      level,
      scope,
      msg,
      fields,
      caller: this.#caller.has(scope) ? frames[0] : undefined,
      stack: wantStack ? frames.join("\n") : undefined,
    };
    const line = this.#json ? formatJson(record) : formatText(record);
    for (const sink of this.#sinks) sink.write(line);
  }

  #makeLogger(scope: string): Logger {
    const emit = (level: Level) => (msg: string, fields?: LogFields) => this.#emit(scope, level, msg, fields);
    const enabled = (level: Level) => this.#enabled(scope, level);
    return {
      scope,
      debug: emit("debug"),
      info: emit("info"),
      warn: emit("warn"),
      error: emit("error"),
      fatal: emit("fatal"),
      get debugEnabled() {
        return enabled("debug");
      },
    };
  }
}

/** Stack frames of the code that called the logger, outermost logging frames removed. */
function callerFrames(): string[] {
  const lines = (new Error().stack ?? "").split("\n").slice(1).map((l) => l.trim().replace(/^at /, ""));
  const firstOutside = lines.findIndex((l) => !l.includes("/shared/log/log_manager.ts"));
  return firstOutside < 0 ? [] : lines.slice(firstOutside).map(shortenFrame);
}

function shortenFrame(frame: string): string {
  return frame.replace(/file:\/\/\/?[^\s)]*\/(?=[^/\s)]+\/[^/\s)]+:\d+:\d+)/, "");
}

/** Formats a record as one JSON object line: time, level, scope, msg, then fields, caller, stack. */
export function formatJson(record: LogRecord): string {
  const out: Record<string, unknown> = {
    time: record.time.toISOString(),
    level: record.level,
    scope: record.scope,
    msg: record.msg,
  };
  if (record.caller) out.caller = record.caller;
  for (const [k, v] of Object.entries(record.fields ?? {})) {
    if (!(k in out)) out[k] = v instanceof Error ? v.message : v;
  }
  if (record.stack) out.stack = record.stack;
  return JSON.stringify(out, (_k, v) => typeof v === "bigint" ? v.toString() : v) + "\n";
}

/** Formats a record as tab-separated text: `time  level  scope  [caller]  msg  key=value …`. */
export function formatText(record: LogRecord): string {
  const parts = [record.time.toISOString(), record.level, record.scope];
  if (record.caller) parts.push(record.caller);
  let msg = record.msg;
  for (const [k, v] of Object.entries(record.fields ?? {})) msg += `\t${k}=${formatValue(v)}`;
  parts.push(msg);
  return parts.join("\t") + "\n" + (record.stack ? record.stack + "\n" : "");
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  if (typeof value === "bigint") return value.toString();
  return JSON.stringify(value) ?? String(value);
}
