import type { LogFlags } from "../log/log_manager.ts";
import type { FlagSpec, FlagValue } from "./flag_spec.ts";

/** The logging flags every subcommand of both programs accepts (references, section 4.2). */
export const LOGGING_FLAGS: readonly FlagSpec[] = Object.freeze(
  [
    {
      name: "log_as_json",
      type: "bool",
      default: false,
      help: "Whether to format output as JSON or in plain console-friendly format",
    },
    {
      name: "log_caller",
      type: "string",
      default: "",
      help:
        "Comma-separated list of scopes for which to include caller information, scopes can be any of [SCOPES]",
    },
    {
      name: "log_output_level",
      type: "string",
      default: "default:info",
      help:
        "Comma-separated minimum per-scope logging level of messages to output, in the form of <scope>:<level>,<scope>:<level>,... where scope can be one of [SCOPES] and level can be one of [debug, info, warn, error, fatal, none]",
    },
    { name: "log_rotate", type: "string", default: "", help: "The path for the optional rotating log file" },
    {
      name: "log_rotate_max_age",
      type: "int",
      default: 30,
      help: "The maximum age in days of a log file beyond which the file is rotated (0 indicates no limit)",
    },
    {
      name: "log_rotate_max_backups",
      type: "int",
      default: 1000,
      help:
        "The maximum number of log file backups to keep before older files are deleted (0 indicates no limit)",
    },
    {
      name: "log_rotate_max_size",
      type: "int",
      default: 104857600,
      help: "The maximum size in megabytes of a log file beyond which the file is rotated",
    },
    {
      name: "log_stacktrace_level",
      type: "string",
      default: "default:none",
      help:
        "Comma-separated minimum per-scope logging level at which stack traces are captured, in the form of <scope>:<level>,<scope:level>,... where scope can be one of [SCOPES] and level can be one of [debug, info, warn, error, fatal, none]",
    },
    {
      name: "log_target",
      type: "stringArray",
      default: ["stdout"],
      help:
        "The set of paths where to output the log. This can be any path as well as the special values stdout and stderr",
    },
  ] satisfies FlagSpec[],
);

/** The logging flags with `[SCOPES]` in their help replaced by a program's scope list. */
export function loggingFlagsFor(scopes: readonly string[]): FlagSpec[] {
  return LOGGING_FLAGS.map((f) => ({ ...f, help: f.help.replace("[SCOPES]", `[${scopes.join(", ")}]`) }));
}

/** Extracts typed logging options from a command's parsed flags. */
export function logFlagsFrom(flags: Readonly<Record<string, FlagValue>>): LogFlags {
  return {
    log_as_json: flags.log_as_json as boolean,
    log_caller: flags.log_caller as string,
    log_output_level: flags.log_output_level as string,
    log_rotate: flags.log_rotate as string,
    log_rotate_max_age: flags.log_rotate_max_age as number,
    log_rotate_max_backups: flags.log_rotate_max_backups as number,
    log_rotate_max_size: flags.log_rotate_max_size as number,
    log_stacktrace_level: flags.log_stacktrace_level as string,
    log_target: flags.log_target as string[],
  };
}
