import type { ValidationReport } from "../validation/report.ts";
import { checkFqdn } from "../validation/hosts.ts";
import { isDnsLabel } from "../validation/labels.ts";
import { stringListAt } from "../validation/values.ts";

/** The reserved gateway name meaning "all sidecars in the mesh". */
export const MESH_GATEWAY = "mesh";

/**
 * Checks a gateway reference: `namespace/name` (both DNS labels), the reserved `mesh`, or the deprecated
 * bare or fully qualified name. Returns a message when invalid.
 */
export function checkGatewayName(name: string): string | undefined {
  const slash = name.indexOf("/");
  if (slash < 0) return checkFqdn(name);
  const namespace = name.slice(0, slash);
  const gateway = name.slice(slash + 1);
  if (namespace === "" || gateway === "") return `namespace and gateway name in "${name}" cannot be empty`;
  if (!isDnsLabel(namespace)) return `invalid namespace "${namespace}" in gateway "${name}"`;
  if (!isDnsLabel(gateway)) return `invalid gateway name "${gateway}" in "${name}"`;
  return undefined;
}

/** Validates a list of gateway references and returns it. */
export function gatewayNamesAt(report: ValidationReport, path: string, value: unknown): string[] {
  return stringListAt(report, path, value, checkGatewayName);
}
