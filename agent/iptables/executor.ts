/** Running external commands (`iptables-restore`, `ip`, …): the injectable executor and the real one. */

/** What a finished command returned. */
export interface CommandResult {
  /** Exit code; 0 means success. */
  readonly code: number;
  /** Everything the command wrote to standard output. */
  readonly stdout: string;
  /** Everything the command wrote to standard error. */
  readonly stderr: string;
}

/** Runs `cmd` with `args`, feeding `stdin` when given. Rejects with {@linkcode CommandNotFoundError} when absent. */
export type CommandExecutor = (
  cmd: string,
  args: readonly string[],
  stdin?: string,
) => Promise<CommandResult>;

/** The Debian package that provides each external command we run. */
const PACKAGE_OF: Readonly<Record<string, string>> = {
  "iptables": "iptables",
  "iptables-restore": "iptables",
  "iptables-save": "iptables",
  "ip6tables": "iptables",
  "ip6tables-restore": "iptables",
  "ip6tables-save": "iptables",
  "ip": "iproute2",
  "unshare": "util-linux",
};

/** A command is not installed (not on PATH). The message names the package to install. */
export class CommandNotFoundError extends Error {
  /** The Debian package that provides the command, when known. */
  readonly debianPackage?: string;

  /** `command` is the program name that was not found; the message says which package provides it. */
  constructor(readonly command: string, options?: ErrorOptions) {
    const pkg = PACKAGE_OF[command];
    const hint = pkg === undefined
      ? "install it or add its directory to PATH"
      : `install the Debian package "${pkg}" (apt-get install ${pkg}); both its nft and legacy variants work`;
    super(`Command "${command}" was not found on PATH: ${hint}`, options);
    this.name = "CommandNotFoundError";
    this.debianPackage = pkg;
  }
}

/** A command ran and exited non-zero; the message carries its exit code and stderr. */
export class CommandFailedError extends Error {
  /** `detail` is appended to the message after the command's output. */
  constructor(
    readonly command: string,
    readonly args: readonly string[],
    readonly result: CommandResult,
    detail = "",
  ) {
    const stderr = result.stderr.trim() || result.stdout.trim() || "no output";
    super(
      `Command "${[command, ...args].join(" ")}" failed with exit code ${result.code}: ${stderr}${detail}`,
    );
    this.name = "CommandFailedError";
  }
}

/**
 * The real executor over `Deno.Command`. Needs `--allow-run` for each command it runs. Commands are looked up
 * on PATH, so whichever `iptables-restore` the system selected (nft or legacy) is used.
 */
export function denoCommandExecutor(): CommandExecutor {
  return async (cmd, args, stdin) => {
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(cmd, {
        args: [...args],
        stdin: stdin === undefined ? "null" : "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) throw new CommandNotFoundError(cmd, { cause: error });
      throw error;
    }
    if (stdin !== undefined) {
      const writer = child.stdin.getWriter();
      try {
        await writer.write(new TextEncoder().encode(stdin));
        await writer.close();
      } catch {
        // The command exited without reading all input; its exit code and stderr say why.
      }
    }
    const output = await child.output();
    const decoder = new TextDecoder();
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: decoder.decode(output.stderr),
    };
  };
}
