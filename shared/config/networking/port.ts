import { childPath, type ValidationReport } from "../validation/report.ts";
import { integerAt, objectAt, stringAt } from "../validation/fields.ts";
import { checkPort, checkPortName, checkProtocol } from "../validation/ports.ts";

/** A port a service, gateway server or sidecar listener exposes. */
export interface Port {
  /** Port number; 0 only for listeners bound to a Unix domain socket. */
  readonly number: number;
  /** HTTP, HTTPS, HTTP2, GRPC, GRPC-WEB, HTTP_PROXY, TCP, TLS, UDP, MONGO, REDIS or MYSQL (case-insensitive). */
  readonly protocol?: string;
  /** Port name; required in service entries and gateways. */
  readonly name?: string;
  /** Port on the endpoints, when it differs from `number` (service entries). */
  readonly targetPort?: number;
}

/** Rules for {@link portAt}, which differ between service entries, gateways and sidecars. */
export interface PortRules {
  /** A port name must be given (service entries, gateways). */
  readonly nameRequired: boolean;
  /** A protocol must be given (gateways); elsewhere empty means "detect". */
  readonly protocolRequired: boolean;
  /** Number 0 is allowed (listeners bound to a Unix domain socket); checked by the caller. */
  readonly allowZero: boolean;
  /** `targetPort` is meaningful (service entries only). */
  readonly allowTargetPort: boolean;
}

/** Validates a Port object and returns it, or undefined when it is not an object. */
export function portAt(
  report: ValidationReport,
  path: string,
  value: unknown,
  rules: PortRules,
): Port | undefined {
  const obj = objectAt(report, path, value, ["number", "protocol", "name", "targetPort"]);
  if (obj === undefined) return undefined;
  const numberPath = childPath(path, "number");
  const number = integerAt(report, numberPath, obj.number);
  if (number === undefined) {
    if (obj.number === undefined || obj.number === null) {
      if (!rules.allowZero) report.error(numberPath, "port number is required");
    }
  } else if (!(rules.allowZero && number === 0)) {
    const problem = checkPort(number);
    if (problem) report.error(numberPath, problem);
  }
  const protocolPath = childPath(path, "protocol");
  const protocol = stringAt(report, protocolPath, obj.protocol) ?? "";
  if (protocol === "" && rules.protocolRequired) report.error(protocolPath, "protocol is required");
  else {
    const problem = checkProtocol(protocol);
    if (problem) report.error(protocolPath, problem);
  }
  const namePath = childPath(path, "name");
  const name = stringAt(report, namePath, obj.name) ?? "";
  if (name === "") {
    if (rules.nameRequired) report.error(namePath, "port name is required");
  } else {
    const problem = checkPortName(name);
    if (problem) report.error(namePath, problem);
  }
  const targetPath = childPath(path, "targetPort");
  const target = integerAt(report, targetPath, obj.targetPort);
  if (target !== undefined && target !== 0) {
    if (!rules.allowTargetPort) report.error(targetPath, "targetPort has no effect here; remove it");
    else {
      const problem = checkPort(target);
      if (problem) report.error(targetPath, problem);
    }
  }
  return { ...obj, number: number ?? 0 } as Port;
}
