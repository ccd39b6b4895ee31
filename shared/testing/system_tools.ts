/**
 * Test support: gates tests on the system programs and privileges they need. On a developer's machine a
 * missing tool skips its tests with one line naming what to install; with `MESH_TEST_REQUIRE_SYSTEM_TOOLS=1`
 * (set by `.ci/run`, which installs them all) a missing tool fails the test file instead, so CI never skips
 * silently. Only tests import this file.
 *
 * @module
 */

/** Something a test needs from the machine, and how a developer gets it. */
export interface SystemRequirement {
  /** Short name shown in the skip line, e.g. `openssl`. */
  readonly name: string;
  /** What to do when it is missing, e.g. `apt-get install openssl`. */
  readonly remedy: string;
  /** Runs once per process: undefined when present, else why not. */
  readonly probe: () => string | undefined;
}

/** Set to `1` to turn a missing requirement into a failure (CI sets it). */
export const REQUIRE_VARIABLE = "MESH_TEST_REQUIRE_SYSTEM_TOOLS";

/** Runs `command args…` quietly: undefined when it exits 0, else the reason. */
function runs(command: string, args: readonly string[]): string | undefined {
  try {
    const { code, stderr } = new Deno.Command(command, {
      args: [...args],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (code === 0) return undefined;
    const detail = new TextDecoder().decode(stderr).trim().split("\n")[0] ?? "";
    return `"${[command, ...args].join(" ")}" exited with ${code}${detail === "" ? "" : `: ${detail}`}`;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return `"${command}" is not on PATH`;
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      return `running "${command}" is not permitted (run with --allow-run=${command})`;
    }
    return `"${command}" cannot run: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** A program found on PATH and answering `probeArgs` with exit code 0, from the Debian package `pkg`. */
export function tool(command: string, probeArgs: readonly string[], pkg: string): SystemRequirement {
  return { name: command, remedy: `apt-get install ${pkg}`, probe: () => runs(command, probeArgs) };
}

/** `openssl`, for certificate checks. */
export const OPENSSL: SystemRequirement = tool("openssl", ["version"], "openssl");

/** `curl`, an HTTP/2 client that reports a stream reset as a failed request. */
export const CURL: SystemRequirement = tool("curl", ["--version"], "curl");

/** `promtool`, for the metrics exposition check. */
export const PROMTOOL: SystemRequirement = tool("promtool", ["--version"], "prometheus");

/** `iptables-restore` and friends. */
export const IPTABLES: SystemRequirement = tool("iptables-restore", ["--version"], "iptables");

/** `kubectl`, the orchestrator's own client, run against the test API server. */
export const KUBECTL: SystemRequirement = tool("kubectl", ["version", "--client"], "kubernetes-client");

/** `prlimit`, to read and raise a process's resource limits. */
export const PRLIMIT: SystemRequirement = tool("prlimit", ["--version"], "util-linux");
/** `chromium`, the headless browser the page tests drive (through playwright-core). */
export const CHROMIUM: SystemRequirement = tool("chromium", ["--version"], "chromium");

/** `ip`, to set up interfaces inside a private network namespace. */
export const IPROUTE2: SystemRequirement = tool("ip", ["-V"], "iproute2");

/**
 * A private network namespace with rights to change its rules: `unshare -n` must work (root, or
 * CAP_SYS_ADMIN and CAP_NET_ADMIN), from util-linux.
 */
export const NETNS: SystemRequirement = {
  name: "private network namespaces (unshare -n)",
  remedy: "apt-get install util-linux, and run as root or with CAP_SYS_ADMIN and CAP_NET_ADMIN",
  probe: () => runs("unshare", ["-n", "true"]),
};

const probed = new Map<SystemRequirement, string | undefined>();
const announced = new Set<SystemRequirement>();

function strict(): boolean {
  try {
    return Deno.env.get(REQUIRE_VARIABLE) === "1";
  } catch {
    return false;
  }
}

/**
 * Options for `Deno.test(name, needs(…), fn)`: `ignore` is true when a requirement is missing. The first test
 * that skips for a requirement prints one line naming it and its remedy.
 *
 * @throws {Error} when a requirement is missing and `MESH_TEST_REQUIRE_SYSTEM_TOOLS=1`: the test file fails to
 *   load, naming what is missing
 */
export function needs(...requirements: SystemRequirement[]): { ignore: boolean } {
  const missing: string[] = [];
  for (const requirement of requirements) {
    if (!probed.has(requirement)) probed.set(requirement, requirement.probe());
    const reason = probed.get(requirement);
    if (reason === undefined) continue;
    missing.push(`${requirement.name} (${reason}; ${requirement.remedy})`);
    if (!strict() && !announced.has(requirement)) {
      announced.add(requirement);
      console.warn(`Skipping tests that need ${requirement.name}: ${reason}. Install: ${requirement.remedy}`);
    }
  }
  if (missing.length > 0 && strict()) {
    throw new Error(`${REQUIRE_VARIABLE}=1 and this machine lacks ${missing.join(", ")}`);
  }
  return { ignore: missing.length > 0 };
}
