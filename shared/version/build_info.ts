import YAML from "yaml";

/** The product version; the one place it is set. */
export const VERSION = "0.1.0";

/** Build information printed by `version` and exported by `mesh_build`. */
export interface BuildInfo {
  /** The product version, {@linkcode VERSION}. */
  readonly version: string;
  /** Commit of the checkout, or `unknown` when it cannot be read. */
  readonly revision: string;
  /** Version of the Deno runtime. */
  readonly deno_version: string;
  /** Version of V8. */
  readonly v8_version: string;
  /** Version of TypeScript built into Deno. */
  readonly typescript_version: string;
  /** Whether the tree had local changes; always `unknown`, since git is not run. */
  readonly status: string;
  /** The release tag; the product version. */
  readonly tag: string;
}

/** Collects build information; `revision` and `status` come from the checkout when readable, else "unknown". */
export function buildInfo(revision: string = readGitRevision()): BuildInfo {
  return Object.freeze({
    version: VERSION,
    revision,
    deno_version: Deno.version.deno,
    v8_version: Deno.version.v8,
    typescript_version: Deno.version.typescript,
    // Whether the tree had local changes cannot be known without running git; say so rather than guess.
    status: "unknown",
    tag: VERSION,
  });
}

/** Renders `version` output: short (the version alone), full (Go-like struct text), json or yaml. */
export function renderVersion(info: BuildInfo, output: string, short: boolean): string {
  switch (output) {
    case "":
      if (short) return `${info.version}\n`;
      return `version.BuildInfo{Version:"${info.version}", GitRevision:"${info.revision}", ` +
        `DenoVersion:"${info.deno_version}", V8Version:"${info.v8_version}", ` +
        `TypeScriptVersion:"${info.typescript_version}", BuildStatus:"${info.status}", GitTag:"${info.tag}"}\n`;
    case "json":
      return JSON.stringify({ clientVersion: short ? { version: info.version } : info }, null, 2) + "\n";
    case "yaml":
      return YAML.stringify({ clientVersion: short ? { version: info.version } : info });
    default:
      throw new RangeError(`--output must be 'yaml' or 'json', got "${output}"`);
  }
}

/** Reads the commit of the checkout this module lives in, without running git. */
function readGitRevision(): string {
  try {
    const gitDir = new URL("../../.git/", import.meta.url);
    const head = Deno.readTextFileSync(new URL("HEAD", gitDir)).trim();
    if (!head.startsWith("ref: ")) return head;
    const ref = head.slice(5);
    try {
      return Deno.readTextFileSync(new URL(ref, gitDir)).trim();
    } catch {
      const packed = Deno.readTextFileSync(new URL("packed-refs", gitDir));
      return packed.split("\n").find((l) => l.endsWith(` ${ref}`))?.split(" ")[0] ?? "unknown";
    }
  } catch {
    return "unknown";
  }
}
