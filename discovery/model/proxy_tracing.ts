/**
 * The tracing settings of a proxy's own ProxyConfig (node metadata `PROXY_CONFIG.tracing`), checked where the
 * node is parsed: the listeners put them into protobuf fields, so a value of the wrong type or range would fail
 * every listener build of that proxy instead of refusing its node. The reference refuses a node whose
 * `PROXY_CONFIG` does not unmarshal into a ProxyConfig the same way. Fields listeners do not read are not
 * checked.
 *
 * @module
 */
import { pathKey, quoteExcerpt } from "@mesh/shared/config/validation/excerpt";

/** One custom span tag of a ProxyConfig: exactly one of a literal, an environment variable, a header. */
export type ProxyTraceTag =
  | { readonly literal: { readonly value: string } }
  | { readonly environment: { readonly name: string; readonly defaultValue: string } }
  | { readonly header: { readonly name: string; readonly defaultValue: string } };

/** `PROXY_CONFIG.tracing`, as far as listeners read it. */
export interface ProxyTracing {
  /** Percentage of requests traced; any finite number (the listeners map values above 100 to 1). */
  readonly sampling?: number;
  /** Longest path tag, a uint32. */
  readonly maxPathTagLength?: number;
  /** Custom span tags by tag name. */
  readonly customTags?: Readonly<Record<string, ProxyTraceTag>>;
}

/** Why `PROXY_CONFIG` cannot be read: the field path, what it is, and what was expected. */
export class ProxyTracingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProxyTracingError";
  }
}

const UINT32_MAX = 0xffff_ffff;
const TAG_KINDS = ["literal", "environment", "header"] as const;

/**
 * The tracing settings of a node's `PROXY_CONFIG` metadata value; undefined when it has none.
 *
 * @throws {ProxyTracingError} naming the field (`PROXY_CONFIG.tracing.…`) that has the wrong type or range
 */
export function parseProxyTracing(proxyConfig: unknown): ProxyTracing | undefined {
  if (proxyConfig === undefined || proxyConfig === null) return undefined;
  const config = map(proxyConfig, "PROXY_CONFIG");
  if (config.tracing === undefined || config.tracing === null) return undefined;
  const tracing = map(config.tracing, "PROXY_CONFIG.tracing");
  const at = (field: string) => `PROXY_CONFIG.tracing.${field}`;
  const out: { sampling?: number; maxPathTagLength?: number; customTags?: Record<string, ProxyTraceTag> } =
    {};
  const { sampling, maxPathTagLength, customTags } = tracing;
  if (sampling !== undefined && sampling !== null) {
    if (typeof sampling !== "number" || !Number.isFinite(sampling)) {
      throw invalid(at("sampling"), sampling, "a finite number (a percentage)");
    }
    out.sampling = sampling;
  }
  if (maxPathTagLength !== undefined && maxPathTagLength !== null) {
    if (
      typeof maxPathTagLength !== "number" || !Number.isInteger(maxPathTagLength) || maxPathTagLength < 0 ||
      maxPathTagLength > UINT32_MAX
    ) {
      throw invalid(at("maxPathTagLength"), maxPathTagLength, `an integer in 0..${UINT32_MAX}`);
    }
    out.maxPathTagLength = maxPathTagLength;
  }
  if (customTags !== undefined && customTags !== null) {
    const tags: Record<string, ProxyTraceTag> = {};
    for (const [name, tag] of Object.entries(map(customTags, at("customTags")))) {
      Object.defineProperty(tags, name, {
        value: traceTag(tag, `${at("customTags")}.${pathKey(name)}`),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    out.customTags = tags;
  }
  return out;
}

function traceTag(value: unknown, path: string): ProxyTraceTag {
  const tag = map(value, path);
  const kinds = TAG_KINDS.filter((k) => tag[k] !== undefined && tag[k] !== null);
  if (kinds.length !== 1) {
    throw new ProxyTracingError(
      `${path} sets ${kinds.length === 0 ? "none" : kinds.join(" and ")} of literal, environment, header: ` +
        "expected exactly one",
    );
  }
  const kind = kinds[0];
  const body = map(tag[kind], `${path}.${kind}`);
  const text = (field: string) => {
    const v = body[field] ?? "";
    if (typeof v !== "string") throw invalid(`${path}.${kind}.${field}`, v, "a string");
    return v;
  };
  if (kind === "literal") return { literal: { value: text("value") } };
  const named = { name: text("name"), defaultValue: text("defaultValue") };
  return kind === "environment" ? { environment: named } : { header: named };
}

function map(value: unknown, path: string): Readonly<Record<string, unknown>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(path, value, "a map");
  }
  return value as Record<string, unknown>;
}

function invalid(path: string, value: unknown, expected: string): ProxyTracingError {
  return new ProxyTracingError(`${path} is ${describe(value)}: expected ${expected}`);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  if (typeof value === "object") return "a map";
  return typeof value === "string" ? `string ${quoteExcerpt(value, 80)}` : `${typeof value} ${String(value)}`;
}
