import { buildInfo, renderVersion } from "../version/build_info.ts";
import { type CommandSpec, UsageError } from "./command_spec.ts";
import type { FlagSpec } from "./flag_spec.ts";

/** Flags of `version` in both programs. */
export const VERSION_FLAGS: readonly FlagSpec[] = Object.freeze(
  [
    { name: "output", short: "o", type: "string", default: "", help: "One of 'yaml' or 'json'." },
    {
      name: "short",
      short: "s",
      type: "bool",
      default: true,
      help: "Use --short=false to generate full version information",
    },
  ] satisfies FlagSpec[],
);

/** The `version` subcommand: short by default, full with `--short=false`, JSON or YAML with `-o`. */
export const versionCommand: CommandSpec = {
  name: "version",
  summary: "Prints out build version information",
  flags: VERSION_FLAGS,
  run(ctx) {
    const output = ctx.flags.output as string;
    if (!["", "json", "yaml"].includes(output)) {
      throw new UsageError(`invalid --output "${output}": expected 'yaml' or 'json'`, ctx.path);
    }
    ctx.io.stdout(renderVersion(buildInfo(), output, ctx.flags.short as boolean));
    return 0;
  },
};
