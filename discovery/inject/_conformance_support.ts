// Test support for the injection conformance test: the fixture cases of tests/fixtures/injection/ turned into
// pods as the reference's webhook test does (README of that folder, comparison "B"), and the normalisation it
// applies before comparing.
import { parse } from "yaml";
import { parseInjectorConfig, parseInjectorValues } from "./inject_config.ts";
import type { InjectorState } from "./inject_review.ts";
import { canonicalResources } from "./quantity.ts";
import { isObject as isObj } from "@mesh/shared/config/validation/fields";

type Obj = Record<string, unknown>;

/** Where the fixtures are, from the repository root. */
export const FIXTURES = new URL("../../tests/fixtures/injection/", import.meta.url);

/** One entry of `cases.json`. */
export interface ConformanceCase {
  readonly name: string;
  readonly input: string;
  readonly expected: string | null;
  readonly expectedError: string | null;
  readonly values: string;
  readonly config: string;
  readonly mesh: string;
  readonly meshOverrides: Obj | null;
  readonly env: Record<string, string>;
  readonly skipWebhook: boolean;
}

/** The cases of `cases.json`. */
export function conformanceCases(): ConformanceCase[] {
  return JSON.parse(Deno.readTextFileSync(new URL("cases.json", FIXTURES))).cases;
}

const read = (file: string) => Deno.readTextFileSync(new URL(file, FIXTURES));

function deepMerge(base: unknown, over: unknown): unknown {
  if (!isObj(base) || !isObj(over)) return over;
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

/** The injector inputs of a case: its config (with its env for `env`), values and mesh with overrides. */
export function caseState(c: ConformanceCase): InjectorState {
  const configText = read(c.config);
  const valuesText = read(c.values);
  const config = parseInjectorConfig(configText, c.config, c.env);
  const values = parseInjectorValues(valuesText, c.values);
  const mesh = deepMerge(parse(read(c.mesh)), c.meshOverrides ?? {}) as Obj;
  const sources = { configText, configFile: c.config, valuesText, valuesFile: c.values, environment: c.env };
  return { config, values, mesh, sources };
}

const WORKLOADS = new Set([
  "Deployment",
  "DeploymentConfig",
  "DaemonSet",
  "StatefulSet",
  "Job",
  "ReplicaSet",
  "ReplicationController",
  "CronJob",
  "Pod",
]); // deno-fmt-ignore

/** A workload document's pod, as the reference's webhook test makes it, and the namespace to ask in. */
export interface CasePod {
  readonly pod: Obj;
  readonly namespace: string;
}

function podOf(doc: Obj): CasePod {
  const metadata = (doc.metadata ?? {}) as Obj;
  const namespace = String(metadata.namespace ?? "");
  if (doc.kind === "Pod") return { pod: structuredClone(doc), namespace };
  const spec = (doc.spec ?? {}) as Obj;
  const template = structuredClone(
    (doc.kind === "CronJob" ? ((spec.jobTemplate as Obj).spec as Obj).template : spec.template) as Obj,
  );
  const podMeta = { ...(template.metadata as Obj ?? {}) };
  const name = String(metadata.name);
  if (doc.kind === "Deployment") {
    podMeta.generateName = `${name}-fake-`;
    podMeta.ownerReferences = [{
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: `${name}-fake`,
      controller: true,
    }];
    podMeta.labels = { ...(podMeta.labels as Obj ?? {}), "pod-template-hash": "fake" };
  } else {
    podMeta.generateName = name;
    podMeta.ownerReferences = [{ apiVersion: doc.apiVersion, kind: doc.kind, name, controller: true }];
  }
  if (namespace) podMeta.namespace = namespace;
  return { pod: { apiVersion: "v1", kind: "Pod", metadata: podMeta, spec: template.spec }, namespace };
}

/** The workload pods of a case file, in order (`List` items expanded). */
export function casePods(file: string): CasePod[] {
  const docs = read(file).split(/\n---/).map((part) => parse(part)).filter(isObj);
  const expanded = docs.flatMap((d) => (d.kind === "List" ? (d.items as Obj[]) : [d]));
  return expanded.filter((d) => WORKLOADS.has(String(d.kind))).map(podOf);
}

/** An AdmissionReview (v1) asking to create `pod` in `namespace`. */
export function podReview(pod: Obj, namespace: string, uid = "conformance"): Obj {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      namespace,
      operation: "CREATE",
      object: pod,
    },
  };
}

function prune(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(prune);
  if (!isObj(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    const p = prune(v);
    if (
      p === null || p === undefined || p === "" || (isObj(p) && Object.keys(p).length === 0) ||
      (Array.isArray(p) && p.length === 0)
    ) {
      continue;
    }
    out[k] = p;
  }
  return out;
}

/**
 * A pod as the reference compares it: status annotation gone, empty values gone (the typed pod leaves them
 * out: its string, map and list fields are `omitempty`), quantities canonical; `dropMetaJson` also removes `MESH_METAJSON_ANNOTATIONS` (the idempotency run).
 */
export function comparable(pod: Obj, dropMetaJson = false): Obj {
  const out = structuredClone(pod);
  const annotations = (out.metadata as Obj | undefined)?.annotations as Obj | undefined;
  if (annotations) delete annotations["sidecar.mesh.io/status"];
  const spec = out.spec as Obj;
  for (const field of ["containers", "initContainers"]) {
    const list = spec[field] as Obj[] | undefined;
    canonicalResources(list);
    for (const c of list ?? []) {
      for (const e of (c.env as Obj[] | undefined) ?? []) {
        delete ((e.valueFrom as Obj | undefined)?.fieldRef as Obj | undefined)?.apiVersion;
      }
      if (dropMetaJson && Array.isArray(c.env)) {
        c.env = (c.env as Obj[]).filter((e) => e.name !== "MESH_METAJSON_ANNOTATIONS");
      }
    }
  }
  return prune(out) as Obj;
}
