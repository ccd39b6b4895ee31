import { pathKey } from "./excerpt.ts";

/** One problem found in a resource: where (field path, optional line) and what. */
export interface Issue {
  /** Field path from the resource root, e.g. `spec.http[0].route[1].weight`. */
  readonly path: string;
  /** What is wrong and what is expected, e.g. `must be between 0 and 100, got 120`. */
  readonly message: string;
  /** 1-based source line of the offending node, when the resource came from a file. */
  readonly line?: number;
}

/** Collects validation errors (the resource is rejected) and warnings (valid but suspicious). */
export class ValidationReport {
  /** Errors in the order found; any error rejects the resource. */
  readonly errors: Issue[] = [];
  /** Warnings in the order found; they never reject the resource. */
  readonly warnings: Issue[] = [];

  /** Records an error at `path`. */
  error(path: string, message: string): void {
    this.errors.push({ path, message: bounded(message) });
  }

  /** Records a warning at `path`. */
  warn(path: string, message: string): void {
    this.warnings.push({ path, message: bounded(message) });
  }

  /** True when no error was recorded. */
  get ok(): boolean {
    return this.errors.length === 0;
  }
}

/** Longest message kept: messages quote input, which must never come back whole (see `excerpt.ts`). */
const MAX_MESSAGE_CHARS = 300;

/** `message` on one line (control characters escaped), cut after {@link MAX_MESSAGE_CHARS} with `…`. */
function bounded(message: string): string {
  // deno-lint-ignore no-control-regex
  const line = message.replace(/[\x00-\x1f\x7f]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}…` : line;
}

/** Joins a parent path and a child key or index the way error paths are printed. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  const printed = pathKey(key);
  return parent === "" ? printed : `${parent}.${printed}`;
}

/** Formats one issue as `path: message` (with ` (line N)` when known). */
export function formatIssue(issue: Issue): string {
  return `${issue.path}: ${issue.message}${issue.line ? ` (line ${issue.line})` : ""}`;
}
