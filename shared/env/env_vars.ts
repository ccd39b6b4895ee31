import { AGENT_ENV_VARS } from "./env_vars_agent.ts";
import { DISCOVERY_ENV_VARS } from "./env_vars_discovery.ts";
import { SHARED_ENV_VARS } from "./env_vars_shared.ts";

/**
 * Every environment variable of both programs, declared once: name, type, default, which program reads it.
 * Generated from the reference tables (spec sections 4.5, 4.6 of mesh-discovery.md and 4.8 of mesh-agent.md),
 * plus the fallbacks of `mesh-iptables` flags that the flag table names.
 */

/** The value type of an environment variable, as the references name them. */
export type EnvType = "bool" | "string" | "int" | "duration" | "float";

/** The programs that read a variable. */
export type Program = "discovery" | "agent";

/** One declared environment variable. */
export interface EnvVarSpec {
  /** The variable's name, as set in the environment. */
  readonly name: string;
  /** How the variable's text is parsed. */
  readonly type: EnvType;
  /** Default in the reference's text form (`100ms`, `true`, `""`). */
  readonly default: string;
  /** The programs that read it; other programs neither parse nor show it. */
  readonly programs: readonly Program[];
  /** What the variable does, shown by `/debug/env`. */
  readonly description: string;
  /** Per-program default where the programs differ (only `POD_NAMESPACE`). */
  readonly defaultByProgram?: Readonly<Partial<Record<Program, string>>>;
}

/** Prefixes of variables read as a family: node metadata (`MESH_META_FOO=bar`, `MESH_METAJSON_LABELS={...}`). */
export const ENV_PREFIXES: readonly string[] = ["MESH_META_", "MESH_METAJSON_"];

/** The registry: every variable either program reads. */
export const ENV_VARS: readonly EnvVarSpec[] = Object.freeze([
  ...DISCOVERY_ENV_VARS,
  ...SHARED_ENV_VARS,
  ...AGENT_ENV_VARS,
]);
