/**
 * A container written as the orchestrator's Go types marshal it: known fields in declaration order, unknown
 * ones dropped, empty ones left out. The reference stores a user's sidecar containers that way in
 * `proxy.mesh.io/overrides`, and that annotation is compared as text.
 * @module
 */

type Obj = Record<string, unknown>;

/** Field order of each nested type, by the field name that holds it. */
const ORDER: Readonly<Record<string, readonly string[]>> = {
  container: [
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
  ],
  ports: ["name", "hostPort", "containerPort", "protocol", "hostIP"],
  env: ["name", "value", "valueFrom"],
  resources: ["limits", "requests"],
  volumeMounts: ["name", "readOnly", "mountPath", "subPath", "mountPropagation", "subPathExpr"],
  probe: [
    "exec",
    "httpGet",
    "tcpSocket",
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
  ],
  httpGet: ["path", "port", "host", "scheme", "httpHeaders"],
  securityContext: [
    "capabilities",
    "privileged",
    "seLinuxOptions",
    "windowsOptions",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "allowPrivilegeEscalation",
    "procMount",
    "seccompProfile",
  ],
  capabilities: ["add", "drop"],
}; // deno-fmt-ignore

const TYPE_OF: Readonly<Record<string, string>> = {
  livenessProbe: "probe",
  readinessProbe: "probe",
  startupProbe: "probe",
};

/** The fields of the orchestrator's Container type, in order. */
export const CONTAINER_FIELDS: readonly string[] = ORDER.container;

/** Types whose booleans are pointers: `false` is written, not left out. */
const POINTER_BOOLS = new Set(["securityContext"]);

const empty = (v: unknown, type: string) =>
  v === undefined || v === null || v === "" || (v === false && !POINTER_BOOLS.has(type)) ||
  (typeof v === "object" && v !== null && Object.keys(v).length === 0);

function ordered(value: unknown, type: string): unknown {
  if (Array.isArray(value)) return value.map((item) => ordered(item, type));
  if (typeof value !== "object" || value === null) return value;
  const order = ORDER[type];
  const obj = value as Obj;
  if (order === undefined) return obj;
  const out: Obj = {};
  for (const key of order) {
    const keep = type === "container" && key === "resources";
    if (empty(obj[key], type) && !keep) continue;
    out[key] = ordered(keep ? obj[key] ?? {} : obj[key], TYPE_OF[key] ?? key);
  }
  return out;
}

/** `container` as the Go type writes it (`resources` always present, as the Go type always writes it). */
export function goContainer(container: Readonly<Obj>): Obj {
  return ordered(container, "container") as Obj;
}
