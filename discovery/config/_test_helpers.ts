import type { LogFields, Logger } from "../../shared/log/logger.ts";

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

/**
 * Polls `condition` every 10 ms until it holds; fails after `timeoutMs` naming what was awaited. For tests
 * that wait on real file system events: a bound, not a timing assertion.
 */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Writes a file through a temporary name and a rename, as editors and orchestrator mounts replace files. */
export async function replaceFile(path: string, text: string): Promise<void> {
  const temp = `${path.slice(0, path.lastIndexOf("/") + 1)}.tmp-${crypto.randomUUID()}`;
  await Deno.writeTextFile(temp, text);
  await Deno.rename(temp, path);
}
