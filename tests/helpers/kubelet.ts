/**
 * Test support: what a node agent does to run a container of a stored pod, done by hand so a test can run an
 * injected container's command as the orchestrator would: its environment (`value`, and `valueFrom.fieldRef`
 * read from the pod), its arguments with `$(VAR)` references expanded, and its volume mounts under a directory
 * standing for the container's root (emptyDir, ConfigMap read from the API server, projected service-account
 * token issued by the test API server's TokenReview table, downward-API labels and annotations).
 *
 * @module
 */
import type { ApiObject, OrchApiServer } from "../../shared/testing/orch_api_server.ts";

type Obj = Record<string, unknown>;
type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
type Mount = { name: string; mountPath: string };
type Volume = {
  name: string;
  emptyDir?: unknown;
  configMap?: { name: string };
  projected?: { sources: { serviceAccountToken?: { path: string; audience?: string } }[] };
  downwardAPI?: { items: { path: string; fieldRef?: { fieldPath: string } }[] };
};

/** A container of `pod` by name. */
export function containerOf(pod: ApiObject, name: string, init = false): Obj {
  const spec = pod.spec as Obj;
  const list = (spec[init ? "initContainers" : "containers"] ?? []) as Obj[];
  const found = list.find((c) => c.name === name);
  if (found === undefined) throw new Error(`Pod ${pod.metadata.name} has no container "${name}"`);
  return found;
}

/** The value of a downward-API `fieldPath` (`metadata.name`, `status.podIP`, `metadata.labels['k']`, …). */
function fieldValue(pod: ApiObject, fieldPath: string): string {
  const keyed = fieldPath.match(/^metadata\.(labels|annotations)\['(.+)'\]$/);
  if (keyed) return String(((pod.metadata[keyed[1]] ?? {}) as Obj)[keyed[2]] ?? "");
  let value: unknown = pod;
  for (const key of fieldPath.split(".")) value = (value as Obj | undefined)?.[key];
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).map(([k, v]) => `${k}=${JSON.stringify(v)}`).sort().join("\n");
  }
  return value === undefined ? "" : String(value);
}

/** The environment of `container`, as the node agent sets it. */
export function containerEnv(pod: ApiObject, container: Obj): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of (container.env ?? []) as EnvVar[]) {
    env[v.name] = v.valueFrom?.fieldRef
      ? fieldValue(pod, v.valueFrom.fieldRef.fieldPath)
      : expand(v.value ?? "", env);
  }
  return env;
}

/** `$(NAME)` references replaced by the variable's value, as the node agent does; unknown ones stay. */
function expand(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name) => env[name] ?? whole);
}

/** The arguments of `container` with its environment expanded. */
export function containerArgs(container: Obj, env: Readonly<Record<string, string>>): string[] {
  return ((container.args ?? []) as string[]).map((a) => expand(a, env));
}

/** Fills `root` (the container's file system) with what `container` mounts. */
export async function mountVolumes(
  api: OrchApiServer,
  pod: ApiObject,
  container: Obj,
  root: string,
): Promise<void> {
  const namespace = pod.metadata.namespace!;
  const volumes = ((pod.spec as Obj).volumes ?? []) as Volume[];
  for (const mount of (container.volumeMounts ?? []) as Mount[]) {
    const volume = volumes.find((v) => v.name === mount.name);
    if (volume === undefined) {
      throw new Error(`Pod ${pod.metadata.name} mounts a missing volume "${mount.name}"`);
    }
    const at = `${root}${mount.mountPath.replace(/\/$/, "")}`;
    await Deno.mkdir(at, { recursive: true });
    if (volume.configMap) {
      const response = await fetch(
        `${api.url}/api/v1/namespaces/${namespace}/configmaps/${volume.configMap.name}`,
      );
      if (!response.ok) {
        throw new Error(`ConfigMap ${namespace}/${volume.configMap.name}: ${await response.text()}`);
      }
      const { data } = await response.json() as { data?: Record<string, string> };
      for (const [key, value] of Object.entries(data ?? {})) await Deno.writeTextFile(`${at}/${key}`, value);
    }
    for (const source of volume.projected?.sources ?? []) {
      const token = source.serviceAccountToken;
      if (token === undefined) continue;
      const account = String((pod.spec as Obj).serviceAccountName ?? "default");
      const audiences = token.audience ? [token.audience] : undefined;
      await Deno.writeTextFile(`${at}/${token.path}`, api.tokenReviews.issue(namespace, account, audiences));
    }
    for (const item of volume.downwardAPI?.items ?? []) {
      if (item.fieldRef) {
        await Deno.writeTextFile(`${at}/${item.path}`, fieldValue(pod, item.fieldRef.fieldPath));
      }
    }
  }
}
