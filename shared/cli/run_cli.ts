import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { type CommandContext, type CommandIo, type CommandSpec, UsageError } from "./command_spec.ts";
import {
  flagPlaceholder,
  type FlagSpec,
  type FlagValue,
  formatFlagDefault,
  parseFlagValue,
} from "./flag_spec.ts";

/**
 * Runs a command tree on `argv` with Go/cobra conventions: every command accepts `inherited` flags, boolean flags
 * take `--flag=false`, repeated array flags accumulate, `--help` works at every level, and bad input prints
 * `Error: <what>` plus a usage hint on stderr and returns 1. Returns the handler's exit code.
 */
export async function runCli(
  root: CommandSpec,
  inherited: readonly FlagSpec[],
  argv: readonly string[],
  io: CommandIo,
): Promise<number> {
  const handlers = new Map<Command, { spec: CommandSpec; flags: FlagSpec[]; path: string }>();
  const program = build(root, inherited, root.name, io, handlers);
  let selected: { command: Command; args: string[] } | undefined;
  for (const [command, entry] of handlers) {
    if (!entry.spec.run) continue;
    command.action((...actionArgs: unknown[]) => {
      const cmd = actionArgs[actionArgs.length - 1] as Command;
      selected = { command: cmd, args: cmd.args.slice(0, cmd.registeredArguments.length) };
    });
  }
  let rewritten: string[];
  try {
    rewritten = rewriteBoolAssignments(argv, program);
    await program.parseAsync(rewritten, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === "commander.helpDisplayed" || error.code === "commander.help" ||
        error.code === "commander.version"
      ) {
        return 0;
      }
      return usageFailure(io, cleanCommanderMessage(error), hintPath(program, argv));
    }
    if (error instanceof UsageError) return usageFailure(io, error.message, error.commandPath);
    throw error;
  }
  if (!selected) return usageFailure(io, "no command given", root.name);
  const entry = handlers.get(selected.command)!;
  if (!entry.spec.run) {
    io.stdout(selected.command.helpInformation());
    return 0;
  }
  const flags: Record<string, FlagValue> = {};
  const explicit = new Set<string>();
  for (const flag of entry.flags) {
    const key = optionKey(flag.name);
    // Inherited flags may stand before the subcommand name (parsed by an ancestor) or after it; the nearest wins.
    for (let cmd: Command | null = selected.command; cmd; cmd = cmd.parent) {
      if (cmd.getOptionValueSource(key) === "cli") {
        explicit.add(flag.name);
        flags[flag.name] = cmd.opts()[key] as FlagValue;
        break;
      }
    }
    if (!(flag.name in flags)) flags[flag.name] = flag.default;
  }
  const ctx: CommandContext = {
    flags: Object.freeze(flags),
    explicit,
    args: selected.args,
    argv,
    io,
    path: entry.path,
  };
  try {
    return await entry.spec.run(ctx);
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(io, error.message, error.commandPath);
    throw error;
  }
}

function usageFailure(io: CommandIo, message: string, path: string): number {
  io.stderr(`Error: ${message}\nRun '${path} --help' for usage.\n`);
  return 1;
}

function build(
  spec: CommandSpec,
  inherited: readonly FlagSpec[],
  path: string,
  io: CommandIo,
  handlers: Map<Command, { spec: CommandSpec; flags: FlagSpec[]; path: string }>,
): Command {
  const command = new Command(spec.name);
  command.description(spec.description ?? spec.summary, undefined as never);
  command.summary(spec.summary);
  command.helpOption("-h, --help", `help for ${spec.name}`);
  command.exitOverride();
  command.configureOutput({ writeOut: io.stdout, writeErr: io.stderr, outputError: () => {} });
  command.showSuggestionAfterError(true);
  command.allowExcessArguments(false);
  const flags = [...inherited, ...(spec.flags ?? [])];
  for (const flag of flags) addFlag(command, flag);
  for (const arg of spec.args ?? []) command.argument(arg.required ? `<${arg.name}>` : `[${arg.name}]`);
  handlers.set(command, { spec, flags, path });
  for (const sub of spec.subcommands ?? []) {
    command.addCommand(build(sub, inherited, `${path} ${sub.name}`, io, handlers));
  }
  if (spec.subcommands?.length) {
    command.helpCommand(false);
    // Options after a subcommand's name belong to the subcommand, as with cobra's persistent flags.
    command.enablePositionalOptions();
  }
  return command;
}

/** The attribute commander stores a flag under (it camel-cases dashes, not underscores). */
function optionKey(name: string): string {
  return new Option(`--${name}`).attributeName();
}

function addFlag(command: Command, flag: FlagSpec): void {
  const shown = formatFlagDefault(flag);
  const description = shown === undefined ? flag.help : `${flag.help} (default ${shown})`;
  const flags = `${flag.short ? `-${flag.short}, ` : ""}--${flag.name}`;
  if (flag.type === "bool") {
    const option = new Option(flags, description);
    command.addOption(option);
    // `--flag=false` is rewritten to the hidden `--no-flag` before parsing.
    command.addOption(new Option(`--no-${flag.name}`).hideHelp());
    return;
  }
  const option = new Option(`${flags} <${flagPlaceholder(flag.type)}>`, description);
  option.argParser((value: string, previous: unknown) => {
    let parsed: FlagValue;
    try {
      parsed = parseFlagValue(flag, value);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
    // Slices and arrays accumulate over repeats, starting fresh instead of appending to the default.
    if ((flag.type === "stringArray" || flag.type === "stringSlice") && Array.isArray(previous)) {
      return [...previous, ...(parsed as string[])];
    }
    return parsed;
  });
  command.addOption(option);
}

/** Rewrites `--flag=false`/`-f=true` for boolean flags into the forms commander understands. */
function rewriteBoolAssignments(argv: readonly string[], program: Command): string[] {
  const boolNames = new Set<string>();
  const shortToLong = new Map<string, string>();
  const walk = (cmd: Command) => {
    for (const option of cmd.options) {
      if (!option.required && !option.optional && !option.negate && option.long) {
        boolNames.add(option.long.slice(2));
        if (option.short) shortToLong.set(option.short.slice(1), option.long.slice(2));
      }
    }
    cmd.commands.forEach(walk);
  };
  walk(program);
  const out: string[] = [];
  for (const arg of argv) {
    if (arg === "--") {
      out.push(...argv.slice(out.length));
      break;
    }
    const m = /^(--?)([^=]+)=(.*)$/.exec(arg);
    const name = m && (m[1] === "--" ? m[2] : shortToLong.get(m[2]));
    if (!m || !name || !boolNames.has(name)) {
      out.push(arg);
      continue;
    }
    const TRUE = ["1", "t", "T", "TRUE", "true", "True"];
    const FALSE = ["0", "f", "F", "FALSE", "false", "False"];
    if (TRUE.includes(m[3])) out.push(`--${name}`);
    else if (FALSE.includes(m[3])) out.push(`--no-${name}`);
    else {
      throw new CommanderError(
        1,
        "commander.invalidArgument",
        `invalid argument "${m[3]}" for "--${name}" flag: expected true or false`,
      );
    }
  }
  return out;
}

function cleanCommanderMessage(error: CommanderError): string {
  let message = error.message.replace(/^error: /, "");
  const unknownOption = /^unknown option '([^']+)'(.*)$/s.exec(message);
  if (unknownOption) message = `unknown flag: ${unknownOption[1]}${unknownOption[2].replace(/\n/g, " ")}`;
  const invalid = /^option '([^']+)' argument '([^']*)' is invalid\. (.*)$/s.exec(message);
  if (invalid) {
    const long = invalid[1].split(/[ ,]+/).find((s) => s.startsWith("--")) ?? invalid[1];
    message = `invalid argument "${invalid[2]}" for "${long}" flag: ${invalid[3]}`;
  }
  const unknownCommand = /^unknown command '([^']+)'(.*)$/s.exec(message);
  if (unknownCommand) {
    message = `unknown command "${unknownCommand[1]}"${unknownCommand[2].replace(/\n/g, " ")}`;
  }
  return message.trim();
}

/** The deepest command named in argv, for the `--help` hint. */
function hintPath(program: Command, argv: readonly string[]): string {
  const path = [program.name()];
  let current = program;
  for (const arg of argv) {
    const next = current.commands.find((c) => c.name() === arg);
    if (!next) continue;
    path.push(arg);
    current = next;
  }
  return path.join(" ");
}
