import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, integerAt, objectAt, stringAt, stringMapAt } from "../validation/fields.ts";
import type { ValidationContext } from "../validation/context.ts";
import { checkHeaderMatchName } from "../validation/headers.ts";
import { labelsAt } from "../validation/labels.ts";
import { checkPort } from "../validation/ports.ts";
import { integerInRangeAt, isSet, optionalObjectAt, stringListAt } from "../validation/values.ts";
import { WORKLOAD_ENTRY_FIELDS, workloadEntryFieldsAt, type WorkloadEntrySpec } from "./workload_entry.ts";

/** How the agent checks a workload's readiness: one of an HTTP GET, a TCP connect, or a command. */
export interface ReadinessProbe {
  /** Seconds after start before the first probe; at least 0. */
  readonly initialDelaySeconds?: number;
  /** Seconds after which a probe times out; at least 0. */
  readonly timeoutSeconds?: number;
  /** Seconds between probes; at least 0. */
  readonly periodSeconds?: number;
  /** Successes in a row after a failure before the workload is ready again; at least 0. */
  readonly successThreshold?: number;
  /** Failures in a row before the workload is not ready; at least 0. */
  readonly failureThreshold?: number;
  /** Probe with an HTTP GET to `port` (required) on the workload; `scheme` is HTTP or HTTPS. */
  readonly httpGet?: {
    readonly path?: string;
    readonly port: number;
    readonly host?: string;
    readonly scheme?: string;
    readonly httpHeaders?: readonly { readonly name?: string; readonly value?: string }[];
  };
  /** Probe by opening a TCP connection to `port` (required). */
  readonly tcpSocket?: { readonly host?: string; readonly port: number };
  /** Probe by running a command in the workload; exit status 0 means ready. */
  readonly exec?: { readonly command: readonly string[] };
}

/** A template for the WorkloadEntries of workloads that register themselves (VMs). */
export interface WorkloadGroupSpec {
  /** Labels and annotations copied to every generated WorkloadEntry. */
  readonly metadata?: {
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  /** The WorkloadEntry template; `address` is filled in when a workload registers. */
  readonly template: WorkloadEntrySpec;
  /** How the agent checks the workload's readiness; exactly one kind of probe. */
  readonly probe?: ReadinessProbe;
}

const PROBE_TIMING = [
  "initialDelaySeconds",
  "timeoutSeconds",
  "periodSeconds",
  "successThreshold",
  "failureThreshold",
];
const PROBE_KINDS = ["httpGet", "tcpSocket", "exec"];

function probePortAt(report: ValidationReport, path: string, value: unknown): void {
  const port = integerAt(report, path, value);
  if (port === undefined) {
    if (!isSet(value)) report.error(path, "port is required");
  } else {
    const problem = checkPort(port);
    if (problem) report.error(path, problem);
  }
}

function probeAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = optionalObjectAt(report, path, value, [...PROBE_TIMING, ...PROBE_KINDS]);
  if (obj === undefined) return;
  for (const f of PROBE_TIMING) integerInRangeAt(report, childPath(path, f), obj[f], 0);
  const kinds = PROBE_KINDS.filter((k) => isSet(obj[k]));
  if (kinds.length !== 1) {
    report.error(path, `exactly one of httpGet, tcpSocket, exec must be set, got ${kinds.length}`);
  }
  const httpPath = childPath(path, "httpGet");
  const http = optionalObjectAt(report, httpPath, obj.httpGet, [
    "path",
    "port",
    "host",
    "scheme",
    "httpHeaders",
  ]);
  if (http) {
    for (const f of ["path", "host"]) stringAt(report, childPath(httpPath, f), http[f]);
    const scheme = stringAt(report, childPath(httpPath, "scheme"), http.scheme);
    if (scheme && !["HTTP", "HTTPS"].includes(scheme.toUpperCase())) {
      report.error(childPath(httpPath, "scheme"), `invalid scheme "${scheme}"; expected HTTP or HTTPS`);
    }
    probePortAt(report, childPath(httpPath, "port"), http.port);
    const headersPath = childPath(httpPath, "httpHeaders");
    for (const [i, raw] of arrayAt(report, headersPath, http.httpHeaders).entries()) {
      const at = childPath(headersPath, i);
      const header = objectAt(report, at, raw, ["name", "value"]);
      if (header === undefined) continue;
      const problem = checkHeaderMatchName(stringAt(report, childPath(at, "name"), header.name) ?? "");
      if (problem) report.error(childPath(at, "name"), problem);
      stringAt(report, childPath(at, "value"), header.value);
    }
  }
  const tcpPath = childPath(path, "tcpSocket");
  const tcp = optionalObjectAt(report, tcpPath, obj.tcpSocket, ["host", "port"]);
  if (tcp) {
    stringAt(report, childPath(tcpPath, "host"), tcp.host);
    probePortAt(report, childPath(tcpPath, "port"), tcp.port);
  }
  const execPath = childPath(path, "exec");
  const exec = optionalObjectAt(report, execPath, obj.exec, ["command"]);
  if (exec && stringListAt(report, childPath(execPath, "command"), exec.command).length === 0) {
    report.error(childPath(execPath, "command"), "an exec probe needs a command");
  }
}

/** Validates a WorkloadGroup spec: metadata labels, a template (address optional), a readiness probe. */
export function validateWorkloadGroup(
  spec: unknown,
  report: ValidationReport,
  _ctx: ValidationContext,
): void {
  const obj = objectAt(report, "spec", spec, ["metadata", "template", "probe"]);
  if (obj === undefined) return;
  const meta = optionalObjectAt(report, "spec.metadata", obj.metadata, ["labels", "annotations"]);
  if (meta) {
    labelsAt(report, "spec.metadata.labels", meta.labels);
    stringMapAt(report, "spec.metadata.annotations", meta.annotations);
  }
  if (!isSet(obj.template)) report.error("spec.template", "template is required");
  else {
    const template = objectAt(report, "spec.template", obj.template, WORKLOAD_ENTRY_FIELDS);
    if (template) {
      workloadEntryFieldsAt(report, "spec.template", template, { optional: true, allowHostname: true });
    }
    if (template?.address) {
      report.warn(
        "spec.template.address",
        "the address is filled in when a workload registers; this value is ignored",
      );
    }
  }
  probeAt(report, "spec.probe", obj.probe);
}
