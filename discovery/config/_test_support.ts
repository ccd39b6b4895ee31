export { type LogLine, RecordingLogger } from "../../shared/testing/recording_logger.ts";
export { waitFor } from "../../shared/testing/wait_for.ts";

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
