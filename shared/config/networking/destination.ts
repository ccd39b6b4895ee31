import { childPath, type ValidationReport } from "../validation/report.ts";
import { integerAt, objectAt, stringAt } from "../validation/fields.ts";
import { checkWildcardDomain } from "../validation/hosts.ts";
import { isDnsLabel } from "../validation/labels.ts";
import { checkPort } from "../validation/ports.ts";

/** Selects a port of a destination service by number. */
export interface PortSelector {
  /** The port number; may be omitted when the service has only one port. */
  readonly number?: number;
}

/** A service (and optionally subset and port) traffic is sent to. */
export interface Destination {
  /** Service name from the registry or a service entry; short names resolve in the rule's namespace. */
  readonly host: string;
  /** Subset name declared in a destination rule for `host`. */
  readonly subset?: string;
  /** Port of `host` to send to; required when the service has more than one port. */
  readonly port?: PortSelector;
}

/** Checks a subset name: a DNS label. Returns a message when invalid. */
export function checkSubsetName(name: string): string | undefined {
  if (name === "") return "subset name cannot be empty";
  return isDnsLabel(name) ? undefined : `invalid subset name "${name}"; expected a DNS label such as "v1"`;
}

/** Validates a port selector `{ number }`. */
export function portSelectorAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): PortSelector | undefined {
  const obj = objectAt(report, path, value, ["number"]);
  if (obj === undefined) return undefined;
  const at = childPath(path, "number");
  const number = integerAt(report, at, obj.number);
  if (number === undefined) {
    if (obj.number === undefined || obj.number === null) report.error(at, "port number is required");
  } else {
    const problem = checkPort(number);
    if (problem) report.error(at, problem);
  }
  return obj as PortSelector;
}

/** Validates a Destination: host is required, a (wildcard) domain but not `*`; subset a DNS label. */
export function destinationAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): Destination | undefined {
  const obj = objectAt(report, path, value, ["host", "subset", "port"]);
  if (obj === undefined) return undefined;
  const hostPath = childPath(path, "host");
  const host = stringAt(report, hostPath, obj.host);
  if (host === undefined) {
    if (obj.host === undefined || obj.host === null) report.error(hostPath, "destination host is required");
  } else if (host === "*") {
    report.error(hostPath, `invalid destination host "*"; name a service`);
  } else {
    const problem = checkWildcardDomain(host);
    if (problem) report.error(hostPath, problem);
  }
  const subset = stringAt(report, childPath(path, "subset"), obj.subset);
  if (subset !== undefined) {
    const problem = checkSubsetName(subset);
    if (problem) report.error(childPath(path, "subset"), problem);
  }
  if (obj.port !== undefined && obj.port !== null) portSelectorAt(report, childPath(path, "port"), obj.port);
  return obj as unknown as Destination;
}
