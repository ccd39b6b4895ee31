/**
 * The checks the reference makes on a pod's sidecar annotations before injecting: interception mode, ports,
 * CIDR lists, integers and booleans. A pod with a bad one is refused, naming the annotation.
 * @module
 */
import { parse } from "yaml";
import { excerpt } from "@mesh/shared/log/excerpt";
import { parseGoBool as parseBool } from "@mesh/shared/flags/scalars";
import { checkIpSubnet } from "@mesh/shared/config/validation/ip";

/** An annotation of the pod that injection cannot use; the message names it and says what is expected. */
export class InvalidAnnotationError extends Error {
  constructor(readonly annotation: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InvalidAnnotationError";
  }
}

const quoted = (value: string) => `"${excerpt(value, 64)}"`;

function port(text: string): boolean {
  const t = text.trim();
  return /^\d+$/.test(t) && Number(t) <= 65535;
}

function portList(name: string, value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  const bad = trimmed.split(",").find((p) => !port(p));
  return bad === undefined ? undefined : `${name} invalid: ${quoted(bad)} is not a port (0-65535)`;
}

/** A CIDR block as Go's `net.ParseCIDR` reads it (the reference's check), through the mesh's one IP parser. */
function cidr(text: string): boolean {
  return text.includes("/") && checkIpSubnet(text) === undefined;
}

function cidrList(name: string, value: string): string | undefined {
  if (value === "") return undefined;
  const bad = value.split(",").find((c) => !cidr(c));
  return bad === undefined ? undefined : `${name} invalid: ${quoted(bad)} is not a CIDR such as 10.0.0.0/8`;
}

const uint32 = (value: string) =>
  /^\d+$/.test(value) && Number(value) <= 0xffffffff ? undefined : "expected an integer from 0 to 4294967295";
/** Go's `strconv.ParseBool`: the boolean `value` spells, or undefined when it spells none. */
export function parseGoBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  try {
    return parseBool(value);
  } catch {
    return undefined;
  }
}

const bool = (value: string) => (parseGoBool(value) === undefined ? "expected true or false" : undefined);

const CHECKS: Readonly<Record<string, (value: string) => string | undefined>> = {
  "sidecar.mesh.io/interceptionMode": (v) =>
    ["REDIRECT", "TPROXY", "NONE"].includes(v)
      ? undefined
      : "interceptionMode invalid, use REDIRECT,TPROXY,NONE",
  "sidecar.mesh.io/enableCoreDump": bool,
  "status.sidecar.mesh.io/port": (v) => (port(v) ? undefined : "expected a port (0-65535)"),
  "readiness.status.sidecar.mesh.io/initialDelaySeconds": uint32,
  "readiness.status.sidecar.mesh.io/periodSeconds": uint32,
  "readiness.status.sidecar.mesh.io/failureThreshold": uint32,
  "traffic.sidecar.mesh.io/includeOutboundIPRanges": (v) =>
    v === "*" ? undefined : cidrList("includeIPRanges", v),
  "traffic.sidecar.mesh.io/excludeOutboundIPRanges": (v) => cidrList("excludeIPRanges", v),
  "traffic.sidecar.mesh.io/includeInboundPorts": (
    v,
  ) => (v === "*" ? undefined : portList("includeInboundPorts", v)),
  "traffic.sidecar.mesh.io/excludeInboundPorts": (v) => portList("excludeInboundPorts", v),
  "traffic.sidecar.mesh.io/excludeOutboundPorts": (v) => portList("excludeOutboundPorts", v),
  "prometheus.mesh.io/merge-metrics": bool,
  "proxy.mesh.io/config": (v) => {
    try {
      const parsed = parse(v);
      return parsed === null || (typeof parsed === "object" && !Array.isArray(parsed))
        ? undefined
        : "expected a mapping of ProxyConfig fields";
    } catch {
      return "expected YAML of ProxyConfig fields";
    }
  },
};

/** What is wrong with the value of one sidecar annotation, or undefined when injection accepts it. */
export function sidecarAnnotationProblem(name: string, value: string): string | undefined {
  return CHECKS[name]?.(value);
}

/**
 * Checks the sidecar annotations the reference checks.
 *
 * @throws {InvalidAnnotationError} for the first bad one (in name order), naming it, its value and the rule
 */
export function validateSidecarAnnotations(annotations: Readonly<Record<string, string>>): void {
  for (const name of Object.keys(annotations).sort()) {
    const check = CHECKS[name];
    const problem = check?.(annotations[name]);
    if (problem !== undefined) {
      throw new InvalidAnnotationError(
        name,
        `Invalid value ${quoted(annotations[name])} for annotation "${name}": ${problem}`,
      );
    }
  }
}
