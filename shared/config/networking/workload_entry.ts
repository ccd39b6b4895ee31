import { childPath, type ValidationReport } from "../validation/report.ts";
import { integerAt, isObject, objectAt, stringAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { checkFqdn } from "../validation/hosts.ts";
import { isIp } from "../validation/ip.ts";
import { labelsAt } from "../validation/labels.ts";
import { mapKeyPath } from "../validation/paths.ts";
import { checkPort, checkPortName } from "../validation/ports.ts";

/** Prefix of an address that is a Unix domain socket path. */
export const UNIX_ADDRESS_PREFIX = "unix://";

/** A non-orchestrated workload (VM, bare metal) or a service entry endpoint. */
export interface WorkloadEntrySpec {
  /** IP address, DNS name (DNS resolution) or `unix:///path` socket. */
  readonly address: string;
  /** Port numbers by service port name. */
  readonly ports?: Readonly<Record<string, number>>;
  /** Labels of the workload, matched by service selectors. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Network of the workload, for multi-network routing; empty means the default network. */
  readonly network?: string;
  /** Locality as `region/zone/subzone`, for locality-aware load balancing. */
  readonly locality?: string;
  /** Load balancing weight relative to other endpoints of the service. */
  readonly weight?: number;
  /** Service account the workload runs as; with sidecars, its identity. */
  readonly serviceAccount?: string;
}

/** Fields of a WorkloadEntry (also of service entry endpoints and workload group templates). */
export const WORKLOAD_ENTRY_FIELDS = [
  "address",
  "ports",
  "labels",
  "network",
  "locality",
  "weight",
  "serviceAccount",
];

/** Checks a Unix domain socket path: absolute, not a directory, or an abstract `@name`. */
export function checkUnixAddress(path: string): string | undefined {
  if (path === "") return "unix address must not be empty";
  if (path.startsWith("@")) return undefined;
  if (!path.startsWith("/") || path.endsWith("/")) return `"${path}" is not an absolute path to a file`;
  return undefined;
}

/** What an address may be where a workload entry is validated. */
export interface WorkloadAddressRules {
  /** The address may be omitted (workload group templates, where it is filled in at registration). */
  readonly optional: boolean;
  /** DNS names are accepted besides IPs and Unix sockets (not for STATIC service entries). */
  readonly allowHostname: boolean;
  /** Port names must be among these (service entry endpoints); undefined: any DNS-label name. */
  readonly servicePorts?: ReadonlySet<string>;
}

/** Validates the fields of a workload entry object `obj` at `path`; the caller checked the field names. */
export function workloadEntryFieldsAt(
  report: ValidationReport,
  path: string,
  obj: Record<string, unknown>,
  rules: WorkloadAddressRules,
): void {
  const addressPath = childPath(path, "address");
  const address = stringAt(report, addressPath, obj.address) ?? "";
  const unix = address.startsWith(UNIX_ADDRESS_PREFIX);
  if (address === "") {
    if (!rules.optional) report.error(addressPath, "address must be set");
  } else if (unix) {
    const problem = checkUnixAddress(address.slice(UNIX_ADDRESS_PREFIX.length));
    if (problem) report.error(addressPath, problem);
  } else if (!isIp(address)) {
    if (!rules.allowHostname) {
      report.error(addressPath, `endpoint address "${address}" is not a valid IP address`);
    } else if (checkFqdn(address)) {
      report.error(addressPath, `endpoint address "${address}" is not a valid FQDN or an IP address`);
    }
  }
  const portsPath = childPath(path, "ports");
  if (obj.ports !== undefined && obj.ports !== null) {
    if (!isObject(obj.ports)) report.error(portsPath, "must be a map of port name to number");
    else {
      if (unix && Object.keys(obj.ports).length > 0) {
        report.error(portsPath, `unix endpoint "${address}" must not include ports`);
      }
      for (const [name, number] of Object.entries(obj.ports)) {
        const at = mapKeyPath(portsPath, name);
        const nameProblem = checkPortName(name);
        if (nameProblem) report.error(at, nameProblem);
        else if (rules.servicePorts && !rules.servicePorts.has(name)) {
          report.error(at, `endpoint port "${name}" is not defined by the service entry's ports`);
        }
        const n = integerAt(report, at, number);
        const portProblem = n === undefined ? undefined : checkPort(n);
        if (portProblem) report.error(at, portProblem);
      }
    }
  }
  labelsAt(report, childPath(path, "labels"), obj.labels);
  for (const f of ["network", "locality", "serviceAccount"]) stringAt(report, childPath(path, f), obj[f]);
  const weight = integerAt(report, childPath(path, "weight"), obj.weight);
  if (weight !== undefined && weight < 0) {
    report.error(childPath(path, "weight"), `weight cannot be negative, got ${weight}`);
  }
  // A uint32 in Istio's API, whose decoding refuses more; Envoy's load_balancing_weight could not carry it.
  if (weight !== undefined && weight > 2 ** 32 - 1) {
    report.error(childPath(path, "weight"), `weight must be at most 4294967295, got ${weight}`);
  }
}

/** Validates a WorkloadEntry spec: an address (IP, DNS name or Unix socket), ports, labels. */
export function validateWorkloadEntry(
  spec: unknown,
  report: ValidationReport,
  _ctx: ValidationContext,
): void {
  const obj = objectAt(report, "spec", spec, WORKLOAD_ENTRY_FIELDS);
  if (obj === undefined) return;
  workloadEntryFieldsAt(report, "spec", obj, { optional: false, allowHostname: true });
}
