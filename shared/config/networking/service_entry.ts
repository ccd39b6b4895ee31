import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, objectAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { exportToAt } from "../validation/exportto.ts";
import { checkFqdn, checkWildcardDomain } from "../validation/hosts.ts";
import { checkIpSubnet } from "../validation/ip.ts";
import { isHttpProtocol, isTlsProtocol, parseProtocol } from "../validation/ports.ts";
import { workloadSelectorAt } from "../validation/selector.ts";
import { enumAt, isSet, stringListAt } from "../validation/values.ts";
import { type Port, portAt } from "./port.ts";
import {
  UNIX_ADDRESS_PREFIX,
  WORKLOAD_ENTRY_FIELDS,
  workloadEntryFieldsAt,
  type WorkloadEntrySpec,
} from "./workload_entry.ts";

/** How the proxy finds the endpoints of a service entry. */
export type Resolution = "NONE" | "STATIC" | "DNS";

/** Adds a service (often one outside the mesh) to the mesh's service registry. */
export interface ServiceEntrySpec {
  /** Host names of the service (`*` wildcard prefixes allowed); at least one. */
  readonly hosts: readonly string[];
  /** Virtual IPs or CIDR blocks of the service. */
  readonly addresses?: readonly string[];
  /** Ports of the service, each with a unique name and number. */
  readonly ports?: readonly Port[];
  /**
   * Whether the service is outside the mesh (no sidecars, no mesh mTLS) or part of it (default
   * `MESH_EXTERNAL`).
   */
  readonly location?: "MESH_EXTERNAL" | "MESH_INTERNAL";
  /** Defaults to NONE. */
  readonly resolution?: Resolution;
  /** Endpoints listed inline; excludes `workloadSelector`. */
  readonly endpoints?: readonly WorkloadEntrySpec[];
  /** Selects WorkloadEntries (or pods) as endpoints instead of listing them. */
  readonly workloadSelector?: { readonly labels?: Readonly<Record<string, string>> };
  /** Namespaces the service is visible in: names, `.` (its own) or `*` (all); none uses the mesh default. */
  readonly exportTo?: readonly string[];
  /** Identities the service's workloads may present, checked by mesh mTLS clients. */
  readonly subjectAltNames?: readonly string[];
}

const FIELDS = [
  "hosts",
  "addresses",
  "ports",
  "location",
  "resolution",
  "endpoints",
  "workloadSelector",
  "exportTo",
  "subjectAltNames",
];

/** Validates a ServiceEntry spec as Istio 1.9 does. */
export function validateServiceEntry(spec: unknown, report: ValidationReport, ctx: ValidationContext): void {
  const obj = objectAt(report, "spec", spec, FIELDS);
  if (obj === undefined) return;
  workloadSelectorAt(report, "spec.workloadSelector", obj.workloadSelector, {
    field: "labels",
    requireLabels: true,
  });
  if (isSet(obj.workloadSelector) && isSet(obj.endpoints)) {
    report.error("spec.workloadSelector", "only one of workloadSelector or endpoints is allowed");
  }
  const hosts = stringListAt(
    report,
    "spec.hosts",
    obj.hosts,
    (h) => h === "*" ? `invalid host "*"; a service entry needs concrete hosts` : checkWildcardDomain(h),
  );
  if (hosts.length === 0) report.error("spec.hosts", "a service entry must have at least one host");
  const addresses = stringListAt(report, "spec.addresses", obj.addresses, checkIpSubnet);
  const resolution = enumAt(report, "spec.resolution", obj.resolution, ["NONE", "STATIC", "DNS"]) ?? "NONE";
  if (addresses.some((a) => a.includes("/")) && resolution === "DNS") {
    report.error("spec.addresses", "CIDR addresses are allowed only for NONE or STATIC resolution");
  }
  enumAt(report, "spec.location", obj.location, ["MESH_EXTERNAL", "MESH_INTERNAL"]);

  const names = new Set<string>();
  const numbers = new Set<number>();
  const ports: Port[] = [];
  for (const [i, raw] of arrayAt(report, "spec.ports", obj.ports).entries()) {
    const at = childPath("spec.ports", i);
    const port = portAt(report, at, raw, {
      nameRequired: true,
      protocolRequired: false,
      allowZero: false,
      allowTargetPort: true,
    });
    if (port === undefined) continue;
    ports.push(port);
    if (port.name && names.has(port.name)) {
      report.error(childPath(at, "name"), `port name "${port.name}" already defined`);
    }
    if (numbers.has(port.number)) {
      report.error(childPath(at, "number"), `port ${port.number} already defined`);
    }
    if (port.name) names.add(port.name);
    numbers.add(port.number);
  }

  const endpoints = arrayAt(report, "spec.endpoints", obj.endpoints);
  if (resolution === "NONE" && endpoints.length > 0) {
    report.error("spec.endpoints", "no endpoints should be provided for resolution NONE");
  }
  if (resolution === "DNS" && endpoints.length === 0) {
    for (const [i, h] of hosts.entries()) {
      if (checkFqdn(h)) {
        report.error(
          childPath("spec.hosts", i),
          "hosts must be FQDNs (no wildcards) when resolution is DNS without endpoints",
        );
      }
    }
  }
  let unixEndpoints = 0;
  for (const [i, raw] of endpoints.entries()) {
    const at = childPath("spec.endpoints", i);
    const ep = objectAt(report, at, raw, WORKLOAD_ENTRY_FIELDS);
    if (ep === undefined) continue;
    if (typeof ep.address === "string" && ep.address.startsWith(UNIX_ADDRESS_PREFIX)) {
      unixEndpoints++;
      if (resolution === "DNS") {
        report.error(childPath(at, "address"), "unix endpoints need resolution STATIC");
      }
    }
    workloadEntryFieldsAt(report, at, ep, {
      optional: false,
      allowHostname: resolution !== "STATIC",
      servicePorts: names,
    });
  }
  if (unixEndpoints > 0 && ports.length !== 1) {
    report.error("spec.ports", `exactly 1 service port required for unix endpoints, got ${ports.length}`);
  }
  // Plain TCP cannot tell hosts apart (no Host header, no SNI), unless the hosts are ignored (NONE).
  if (resolution !== "NONE" && hosts.length > 1) {
    const opaque = ports.find((p) => {
      const protocol = parseProtocol(p.protocol ?? "");
      return !isHttpProtocol(protocol) && !isTlsProtocol(protocol);
    });
    if (opaque) {
      report.error("spec.hosts", `multiple hosts provided with non-HTTP, non-TLS port ${opaque.number}`);
    }
  }
  exportToAt(report, "spec.exportTo", obj.exportTo, { namespace: ctx.namespace, allowNone: true });
  stringListAt(report, "spec.subjectAltNames", obj.subjectAltNames);
}
