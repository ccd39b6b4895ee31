import { childPath, type ValidationReport } from "../validation/report.ts";
import { describe, isObject, objectAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { mapKeyPath } from "../validation/paths.ts";
import { checkPort } from "../validation/ports.ts";
import { validateWorkloadSelector, type WorkloadSelector } from "./workload_selector.ts";

/**
 * Mutual TLS mode of a workload's inbound traffic. `UNSET` inherits from the parent scope (namespace, then
 * mesh); `PERMISSIVE` accepts plain text and mTLS; `STRICT` only mTLS; `DISABLE` only plain text.
 */
export type MutualTlsMode = "UNSET" | "DISABLE" | "PERMISSIVE" | "STRICT";

/** Every mTLS mode, in the API's order. */
export const MUTUAL_TLS_MODES: readonly MutualTlsMode[] = ["UNSET", "DISABLE", "PERMISSIVE", "STRICT"];

/** Mutual TLS settings; an absent mode is `UNSET`. */
export interface MutualTls {
  /** Whether peers must, may or must not use mutual TLS; `UNSET` inherits from the parent policy. */
  readonly mode?: MutualTlsMode;
}

/** Spec of a PeerAuthentication (security.mesh.io/v1beta1), with Istio 1.9's fields and meaning. */
export interface PeerAuthenticationSpec {
  /** Absent or without labels: the policy applies to the whole namespace (the mesh, in the root namespace). */
  readonly selector?: WorkloadSelector;
  /** Mutual TLS for every port of the selected workloads, unless `portLevelMtls` overrides a port. */
  readonly mtls?: MutualTls;
  /** Per workload port (decimal keys, 1..65535); only for policies with a selector. */
  readonly portLevelMtls?: Readonly<Record<string, MutualTls>>;
}

const SPEC_FIELDS = ["selector", "mtls", "portLevelMtls"] as const;
const PORT_KEY = /^[0-9]+$/;

/**
 * Validates a PeerAuthentication spec as strictly as Istio 1.9: selector labels, mTLS modes, and
 * port-level settings (only with a selector, at least one port, ports 1..65535).
 */
export function validatePeerAuthentication(
  spec: unknown,
  report: ValidationReport,
  _ctx: ValidationContext,
): void {
  // A document without a spec has every field at its default, as in Istio.
  const s = objectAt(report, "spec", spec ?? {}, SPEC_FIELDS);
  if (s === undefined) return;
  const labels = validateWorkloadSelector(report, "spec.selector", s.selector);
  const mode = readMtls(report, "spec.mtls", s.mtls);

  const portsPath = "spec.portLevelMtls";
  const ports = s.portLevelMtls;
  let portCount = 0;
  if (ports !== undefined && ports !== null) {
    if (!isObject(ports)) {
      report.error(portsPath, `must be a map from port number to mTLS settings, got ${describe(ports)}`);
    } else {
      const entries = Object.entries(ports);
      portCount = entries.length;
      if (portCount === 0) report.error(portsPath, "must have at least one port when present");
      else if (Object.keys(labels).length === 0) {
        report.error(
          portsPath,
          "is only allowed in a policy with a workload selector; a namespace or mesh-wide policy cannot have port-level mTLS",
        );
      }
      for (const [port, settings] of entries) {
        const at = mapKeyPath(portsPath, port);
        const problem = PORT_KEY.test(port) ? checkPort(Number(port)) : `port "${port}" is not a number`;
        if (problem) report.error(at, problem);
        if (settings === null || settings === undefined) report.error(at, "must be an object with a mode");
        else readMtls(report, at, settings);
      }
    }
  }

  if (mode === "UNSET" && portCount === 0) {
    report.warn(
      "spec.mtls",
      "mode is UNSET (inherited) and there are no port-level settings, so the policy has no effect",
    );
  }
}

/** Reads an mTLS settings object at `path`; returns its mode (`UNSET` when absent) or undefined when invalid. */
function readMtls(report: ValidationReport, path: string, value: unknown): MutualTlsMode | undefined {
  if (value === undefined || value === null) return "UNSET";
  const mtls = objectAt(report, path, value, ["mode"]);
  if (mtls === undefined) return undefined;
  const mode = mtls.mode;
  if (mode === undefined || mode === null) return "UNSET";
  if (typeof mode === "string" && (MUTUAL_TLS_MODES as readonly string[]).includes(mode)) {
    return mode as MutualTlsMode;
  }
  report.error(
    childPath(path, "mode"),
    `must be one of ${MUTUAL_TLS_MODES.join(", ")}, got ${describe(mode)}`,
  );
  return undefined;
}
