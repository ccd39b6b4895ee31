/**
 * Sidecar injection of one pod, as the reference's injector does it: annotations checked, the pod's proxy
 * config, the selected templates rendered over the pod (strategic merge), a user's own sidecar containers laid
 * back over the injected ones, then the post-processing of `pod_post_process.ts`. Re-injecting an injected pod
 * first removes what the last injection added, so the result is the same.
 * @module
 */
import { validateSidecarAnnotations } from "./annotation_validation.ts";
import { readRenderedYaml } from "./rendered_yaml.ts";
import type { InjectorConfig } from "./inject_config.ts";
import { CONTAINER_FIELDS, goContainer } from "./go_field_order.ts";
import { goView, stringMap } from "./go_view.ts";
import { podProxyConfig, proxyConfigView } from "./proxy_config_json.ts";
import { canonicalResources } from "./quantity.ts";
import { strategicMerge } from "./strategic_merge.ts";
import {
  annotationsOf,
  applyMetadata,
  applyPrometheusMerge,
  overwriteClusterEnv,
  reorderContainers,
  rewriteAppProbes,
  STATUS_ANNOTATION,
} from "./pod_post_process.ts";

type Obj = Record<string, unknown>;

/** Injection that cannot be done for this pod: a template that fails, a missing template. */
export class InjectionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "InjectionError";
  }
}

/** Everything one injection reads besides the pod. */
export interface InjectionContext {
  readonly config: InjectorConfig;
  readonly values: Readonly<Obj>;
  /** The effective mesh config as JSON (`defaultConfig` holds the proxy config defaults). */
  readonly mesh: Readonly<Obj>;
  readonly revision: string;
  /** Env from the webhook URL (`/inject/cluster/<c>/net/<n>`). */
  readonly proxyEnvs: Readonly<Record<string, string>>;
}

const OVERRIDES_ANNOTATION = "proxy.mesh.io/overrides";
const TEMPLATES_ANNOTATION = "inject.mesh.io/templates";
const clone = <T>(value: T): T => structuredClone(value);
const path = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce((v: unknown, k) => (typeof v === "object" && v !== null ? (v as Obj)[k] : undefined), value);

/** A user's container as an overlay: as the Go type writes it, `image: auto` meaning the injected image. */
function typedContainer(container: Obj): Obj {
  const out = goContainer(container);
  if (out.image === "auto") delete out.image;
  return out;
}

/** The workload the pod belongs to, as the reference derives it from the controller reference. */
function deployment(pod: Obj): { deployMeta: Obj; typeMeta: Obj } {
  const metadata = (pod.metadata ?? {}) as Obj;
  const deployMeta: Obj = clone(metadata);
  const typeMeta: Obj = { kind: "Pod", apiVersion: "v1" };
  const owner = metadata.generateName
    ? ((metadata.ownerReferences as Obj[] | undefined) ?? []).find((r) => r.controller === true)
    : undefined;
  if (owner !== undefined) {
    const name = String(owner.name ?? "");
    typeMeta.apiVersion = owner.apiVersion;
    typeMeta.kind = owner.kind;
    deployMeta.name = name;
    const hash = (metadata.labels as Obj | undefined)?.["pod-template-hash"];
    if (owner.kind === "ReplicaSet" && typeof hash === "string" && hash !== "" && name.endsWith(hash)) {
      deployMeta.name = name.slice(0, name.length - hash.length - 1);
      typeMeta.kind = "Deployment";
    } else if (owner.kind === "Job" && name.length > 11 && /^-\d{10}$/.test(name.slice(-11))) {
      deployMeta.name = name.slice(0, -11);
      typeMeta.kind = "CronJob";
      typeMeta.apiVersion = "batch/v1beta1";
    }
  }
  if (!deployMeta.name) deployMeta.name = metadata.name ?? "";
  return { deployMeta, typeMeta };
}

function overridesOf(pod: Obj): { containers?: Obj[]; initContainers?: Obj[] } {
  const text = (path(pod, "metadata", "annotations") as Obj | undefined)?.[OVERRIDES_ANNOTATION];
  if (typeof text !== "string") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InjectionError(`Cannot read the "${OVERRIDES_ANNOTATION}" annotation as JSON`, {
      cause: error,
    });
  }
}

/** The pod without what a previous injection added (named in its status annotation), overrides put back. */
function strippedPod(pod: Obj, statusPort: number): Obj {
  const out = clone(pod);
  const annotations = annotationsOf(out);
  const status = annotations[STATUS_ANNOTATION];
  if (status !== undefined) {
    let previous: { containers?: string[] | null; initContainers?: string[] | null } = {};
    try {
      previous = JSON.parse(status);
    } catch { /* an unreadable status strips nothing, as in the reference */ }
    const spec = out.spec as Obj;
    const drop = (field: string, names: string[] | null | undefined) => {
      if (Array.isArray(spec[field]) && names) {
        spec[field] = (spec[field] as Obj[]).filter((c) => !names.includes(c.name as string));
      }
    };
    drop("containers", previous.containers);
    drop("initContainers", previous.initContainers);
    if (annotations["prometheus.io/port"] === String(statusPort)) {
      for (const key of ["scrape", "path", "port"]) delete annotations[`prometheus.io/${key}`];
    }
    delete annotations[STATUS_ANNOTATION];
  }
  const overrides = overridesOf(out);
  const spec = out.spec as Obj;
  for (const field of ["containers", "initContainers"] as const) {
    for (const container of overrides[field] ?? []) {
      const list = (spec[field] ??= []) as Obj[];
      if (!list.some((c) => c.name === container.name)) list.push(container);
    }
  }
  return out;
}

function selectTemplates(config: InjectorConfig, annotations: Readonly<Record<string, string>>): string[] {
  const named = annotations[TEMPLATES_ANNOTATION];
  const names = named === undefined ? [...config.defaultTemplates] : named.split(",").map((n) => n.trim());
  return names.flatMap((name) => config.aliases[name] ?? [name]);
}

/**
 * The injected pod.
 *
 * @throws {InvalidAnnotationError} for a bad sidecar annotation, naming it
 * @throws {InjectionError} when a template is missing, fails to render or renders no pod YAML
 */
export function injectPod(original: Readonly<Obj>, context: InjectionContext): Obj {
  const pod = clone(original) as Obj;
  pod.spec ??= {};
  const annotations = { ...(path(pod, "metadata", "annotations") as Record<string, string> | undefined) };
  validateSidecarAnnotations(annotations);
  const defaultConfig = (context.mesh.defaultConfig ?? {}) as Obj;
  let proxyConfig: Obj;
  try {
    proxyConfig = podProxyConfig(defaultConfig, annotations["proxy.mesh.io/config"]);
  } catch (error) {
    throw new InjectionError((error as Error).message, { cause: error });
  }
  const statusPort = Number(defaultConfig.statusPort ?? 0);
  const proxyEnvs: Record<string, string> = { ...context.proxyEnvs };
  const cluster = proxyEnvs.MESH_META_CLUSTER_ID ||
    String(path(context.values, "global", "multiCluster", "clusterName") ?? "");
  const labels = (path(pod, "metadata", "labels") ?? {}) as Record<string, string>;
  const network = labels["topology.mesh.io/network"] ??
    (proxyEnvs.MESH_META_NETWORK || String(path(context.values, "global", "network") ?? ""));
  if (cluster !== "") proxyEnvs.MESH_META_CLUSTER_ID = cluster;
  if (network !== "") proxyEnvs.MESH_META_NETWORK = network;

  const stripped = strippedPod(pod, statusPort);
  const { deployMeta, typeMeta } = deployment(pod);
  const strippedMeta = (stripped.metadata ?? {}) as Obj;
  const data = {
    TypeMeta: goView(typeMeta),
    DeploymentMeta: goView(deployMeta),
    ObjectMeta: goView(strippedMeta, {
      Labels: stringMap(strippedMeta.labels as Record<string, string>),
      Annotations: stringMap(strippedMeta.annotations as Record<string, string>),
    }),
    Spec: goView(stripped.spec),
    ProxyConfig: proxyConfigView(proxyConfig),
    MeshConfig: goView({ ...context.mesh, defaultConfig: proxyConfig }),
    Values: context.values,
    Revision: context.revision,
  };
  let merged: Obj = pod;
  let templatePod: Obj = {};
  for (const name of selectTemplates(context.config, annotations)) {
    const template = context.config.templates[name];
    if (template === undefined) {
      const known = Object.keys(context.config.templates).sort().join(", ");
      throw new InjectionError(`Requested template "${name}" not found; have ${known}`);
    }
    let rendered: unknown;
    try {
      rendered = readRenderedYaml(template(data));
    } catch (error) {
      throw new InjectionError(`Template "${name}" failed: ${(error as Error).message.split("\n")[0]}`, {
        cause: error,
      });
    }
    if (rendered === null || rendered === undefined) continue;
    if (typeof rendered !== "object" || Array.isArray(rendered)) {
      throw new InjectionError(
        `Template "${name}" rendered no pod: expected a mapping with metadata and spec`,
      );
    }
    merged = strategicMerge(merged, rendered) as Obj;
    templatePod = strategicMerge(templatePod, rendered) as Obj;
  }
  merged = reapplyUserContainers(merged, pod, templatePod);
  overwriteClusterEnv(merged, proxyEnvs);
  applyPrometheusMerge(merged, context.mesh.enablePrometheusMerge !== false, statusPort);
  const rewriteByDefault = path(context.values, "sidecarInjectorWebhook", "rewriteAppHTTPProbe") === true;
  rewriteAppProbes(merged, rewriteByDefault, statusPort);
  applyMetadata(merged, templatePod, proxyEnvs.MESH_META_NETWORK, context.config.injectedAnnotations);
  const hold = proxyConfig.holdApplicationUntilProxyStarts === true ||
    path(context.values, "global", "proxy", "holdApplicationUntilProxyStarts") === true;
  reorderContainers(merged, hold);
  const spec = merged.spec as Obj;
  for (const field of ["containers", "initContainers"]) {
    for (const c of (spec[field] as Obj[] | undefined) ?? []) {
      // What the orchestrator's Container type lacks is dropped, as the reference's typed round trip drops it
      // (its template writes an init container's restartPolicy and a container's securityContext.fsGroup).
      for (const key of Object.keys(c)) if (!CONTAINER_FIELDS.includes(key)) delete c[key];
      c.resources ??= {};
      if (typeof c.securityContext === "object" && c.securityContext !== null) {
        delete (c.securityContext as Obj).fsGroup;
      }
      for (const e of (c.env as Obj[] | undefined) ?? []) if (e.value === "") delete e.value;
    }
    canonicalResources(spec[field] as Obj[] | undefined);
  }
  return merged;
}

/** A user's own containers named like injected ones are laid back over them and kept in the overrides annotation. */
function reapplyUserContainers(merged: Obj, pod: Obj, templatePod: Obj): Obj {
  const existing = overridesOf(pod);
  const recorded: { containers?: Obj[]; initContainers?: Obj[] } = {};
  for (const field of ["containers", "initContainers"] as const) {
    for (const injected of (path(templatePod, "spec", field) as Obj[] | undefined) ?? []) {
      const match = existing[field]?.find((c) => c.name === injected.name) ??
        ((path(pod, "spec", field) as Obj[] | undefined) ?? []).find((c) => c.name === injected.name);
      if (match === undefined) continue;
      const overlay = typedContainer(clone(match));
      (recorded[field] ??= []).push(overlay);
      merged = strategicMerge(merged, { spec: { [field]: [overlay] } }) as Obj;
    }
  }
  const alreadyInjected = Object.hasOwn(
    (path(pod, "metadata", "annotations") ?? {}) as Obj,
    STATUS_ANNOTATION,
  );
  if (!alreadyInjected && (recorded.containers || recorded.initContainers)) {
    annotationsOf(merged)[OVERRIDES_ANNOTATION] = JSON.stringify(recorded);
  }
  return merged;
}
