import type { FlagSpec, FlagValue } from "./flag_spec.ts";

/** Where a command writes its output; tests pass buffers. */
export interface CommandIo {
  /** Writes text to standard output as is (no newline added). */
  stdout(text: string): void;
  /** Writes text to standard error as is (no newline added). */
  stderr(text: string): void;
}

/** What a command's handler receives: typed flags (defaults applied), positional arguments, I/O. */
export interface CommandContext {
  /** Flag values by flag name, defaults applied. */
  readonly flags: Readonly<Record<string, FlagValue>>;
  /** Flags the user set explicitly (for fallbacks such as `--envoy-port` → `$PROXY_PORT`). */
  readonly explicit: ReadonlySet<string>;
  /** Positional arguments, after flags are removed. */
  readonly args: readonly string[];
  /** The raw command line, for introspection. */
  readonly argv: readonly string[];
  /** Where the command writes its output. */
  readonly io: CommandIo;
  /** The full command path, e.g. `mesh-discovery discovery`. */
  readonly path: string;
}

/** A positional argument of a command. */
export interface ArgSpec {
  /** Name shown in usage: `<name>` when required, `[name]` when not. */
  readonly name: string;
  /** Whether the command fails with a usage error when it is missing. */
  readonly required: boolean;
}

/** A command of the tree: its flags (added to the inherited ones), arguments, handler and subcommands. */
export interface CommandSpec {
  /** The word that selects the command on the command line. */
  readonly name: string;
  /** One line shown in the parent's command list. */
  readonly summary: string;
  /** Longer text shown in the command's own help; defaults to `summary`. */
  readonly description?: string;
  /** Flags of this command, added to those it inherits. */
  readonly flags?: readonly FlagSpec[];
  /** Positional arguments, in order. */
  readonly args?: readonly ArgSpec[];
  /** Returns the process exit code. Commands without a handler only group subcommands. */
  readonly run?: (ctx: CommandContext) => Promise<number> | number;
  /** Child commands. */
  readonly subcommands?: readonly CommandSpec[];
}

/** A usage error: printed as `Error: <message>` with a help hint, exit code 1. */
export class UsageError extends Error {
  /** `commandPath` names the command whose usage the hint points to. */
  constructor(message: string, readonly commandPath: string) {
    super(message);
    this.name = "UsageError";
  }
}
