/**
 * Test support: a logger that keeps every line, for assertions on what was logged and how often.
 *
 * @module
 */
import type { LogFields, Logger } from "../log/logger.ts";

/** One recorded log line. */
export interface LogLine {
  readonly level: "debug" | "info" | "warn" | "error" | "fatal";
  readonly msg: string;
  readonly fields?: LogFields;
}

/** A logger that keeps every line, for assertions. */
export class RecordingLogger implements Logger {
  readonly scope = "test";
  readonly debugEnabled = true;
  readonly lines: LogLine[] = [];

  debug(msg: string, fields?: LogFields): void {
    this.lines.push({ level: "debug", msg, ...(fields && { fields }) });
  }
  info(msg: string, fields?: LogFields): void {
    this.lines.push({ level: "info", msg, ...(fields && { fields }) });
  }
  warn(msg: string, fields?: LogFields): void {
    this.lines.push({ level: "warn", msg, ...(fields && { fields }) });
  }
  error(msg: string, fields?: LogFields): void {
    this.lines.push({ level: "error", msg, ...(fields && { fields }) });
  }
  fatal(msg: string, fields?: LogFields): void {
    this.lines.push({ level: "fatal", msg, ...(fields && { fields }) });
  }

  /** Lines of a level whose message contains `text`. */
  matching(level: LogLine["level"], text: string): LogLine[] {
    return this.lines.filter((l) => l.level === level && l.msg.includes(text));
  }
}
