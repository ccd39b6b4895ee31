import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { FileConfigSource, type FileConfigSourceOptions } from "./file_config_source.ts";
import { MemoryConfigStore } from "./memory_config_store.ts";

export { type LogLine, RecordingLogger } from "@mesh/shared/testing/recording_logger";
export { waitFor } from "@mesh/shared/testing/wait_for";

/**
 * A started source over `dir` with short periods (`options` override them), with its store, logger and
 * metrics, and the sorted names of the `kind` resources it serves.
 */
export async function startTestSource(
  dir: string,
  kind: string,
  options: Partial<FileConfigSourceOptions> = {},
) {
  const store = new MemoryConfigStore();
  const logger = new RecordingLogger();
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const source = new FileConfigSource({
    dir,
    store,
    defaultNamespace: "default",
    logger,
    metrics,
    debounceMs: 20,
    checkMs: 30,
    ...options,
  });
  await source.start();
  const names = () => store.list(kind).map((r) => r.meta.name).sort().join(",");
  return { source, store, logger, metrics, names };
}

/** Writes a file through a temporary name and a rename, as editors and orchestrator mounts replace files. */
export async function replaceFile(path: string, text: string): Promise<void> {
  const temp = `${path.slice(0, path.lastIndexOf("/") + 1)}.tmp-${crypto.randomUUID()}`;
  await Deno.writeTextFile(temp, text);
  await Deno.rename(temp, path);
}

/** A VirtualService `name` in namespace `shop` routing `host` to itself, as YAML. */
export function virtualService(name: string, host: string): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata: {name: ${name}, namespace: shop}
spec:
  hosts: [${host}]
  http:
  - route:
    - destination: {host: ${host}}
`;
}
