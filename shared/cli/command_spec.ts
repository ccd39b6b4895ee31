import type { FlagSpec, FlagValue } from "./flag_spec.ts";

/** Where a command writes its output; tests pass buffers. */
export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What a command's handler receives: typed flags (defaults applied), positional arguments, I/O. */
export interface CommandContext {
  readonly flags: Readonly<Record<string, FlagValue>>;
  /** Flags the user set explicitly (for fallbacks such as `--envoy-port` → `$PROXY_PORT`). */
  readonly explicit: ReadonlySet<string>;
  readonly args: readonly string[];
  /** The raw command line, for introspection. */
  readonly argv: readonly string[];
  readonly io: CommandIo;
  /** The full command path, e.g. `mesh-discovery discovery`. */
  readonly path: string;
}

/** A positional argument of a command. */
export interface ArgSpec {
  readonly name: string;
  readonly required: boolean;
}

/** A command of the tree: its flags (added to the inherited ones), arguments, handler and subcommands. */
export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly description?: string;
  readonly flags?: readonly FlagSpec[];
  readonly args?: readonly ArgSpec[];
  /** Returns the process exit code. Commands without a handler only group subcommands. */
  readonly run?: (ctx: CommandContext) => Promise<number> | number;
  readonly subcommands?: readonly CommandSpec[];
}

/** A usage error: printed as `Error: <message>` with a help hint, exit code 1. */
export class UsageError extends Error {
  constructor(message: string, readonly commandPath: string) {
    super(message);
    this.name = "UsageError";
  }
}
