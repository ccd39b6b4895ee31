import { decodeConfigFile } from "./config_file.ts";
import { defaultMeshConfig, type MeshConfig } from "./mesh_config.ts";
import { checkMeshConfig, type MeshConfigFields, meshConfigFields } from "./mesh_config_schema.ts";
import { defaultProxyConfig, mergeProxyConfig, type ProxyConfig } from "./proxy_config.ts";
import { checkProxyConfig, proxyConfigFields } from "./proxy_config_schema.ts";

/** A parsed mesh config and its warnings (each as `file:line: path: message`). */
export interface ParsedMeshConfig {
  /** The mesh config, the file's fields merged over the defaults. */
  readonly config: MeshConfig;
  /** Warnings found while parsing, each as `file:line: field.path: message`. */
  readonly warnings: readonly string[];
}

/** A parsed proxy config and its warnings. */
export interface ParsedProxyConfig {
  /** The proxy config, the given fields merged over the base. */
  readonly config: ProxyConfig;
  /** Warnings found while parsing, each as `file:line: field.path: message`. */
  readonly warnings: readonly string[];
}

/**
 * Applies mesh config fields over `base` as Istio's `ApplyMeshConfig` does: every field the file sets
 * replaces the base's (lists and messages as a whole), except `defaultConfig`, which is merged field by field
 * (its `proxyMetadata` entry by entry).
 */
export function mergeMeshConfig(base: MeshConfig, fields: MeshConfigFields): MeshConfig {
  const { defaultConfig, ...rest } = fields;
  return {
    ...base,
    ...rest,
    defaultConfig: defaultConfig ? mergeProxyConfig(base.defaultConfig, defaultConfig) : base.defaultConfig,
  };
}

/**
 * Parses a mesh config file (YAML, one document; empty means all defaults) and merges it over `base`
 * (the defaults unless given). Unknown fields, wrong types and invalid values are errors: throws
 * {@link MeshConfigError} listing each as `file:line: field.path: message`.
 */
export function parseMeshConfig(
  text: string,
  file: string,
  base: MeshConfig = defaultMeshConfig(),
): ParsedMeshConfig {
  const { value, warnings } = decodeConfigFile(text, file, (report, raw) => {
    const merged = mergeMeshConfig(base, meshConfigFields(report, "", raw) ?? {});
    if (report.ok) {
      checkProxyConfig(report, "defaultConfig", merged.defaultConfig);
      checkMeshConfig(report, merged);
    }
    return merged;
  });
  return { config: value, warnings };
}

/**
 * Parses a proxy config (the YAML of `PROXY_CONFIG` or a pod's proxy config annotation) and merges it over
 * `base` like the mesh config's `defaultConfig`. `source` names the input in errors.
 */
export function parseProxyConfig(
  text: string,
  source: string,
  base: ProxyConfig = defaultProxyConfig(),
): ParsedProxyConfig {
  const { value, warnings } = decodeConfigFile(text, source, (report, raw) => {
    const merged = mergeProxyConfig(base, proxyConfigFields(report, "", raw) ?? {});
    if (report.ok) checkProxyConfig(report, "", merged);
    return merged;
  });
  return { config: value, warnings };
}
