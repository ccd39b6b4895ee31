export { type LogLine, RecordingLogger } from "../../shared/testing/recording_logger.ts";

/**
 * Polls `condition` every 10 ms until it holds; fails after `timeoutMs` naming what was awaited. For tests
 * that wait on real file system events: a bound, not a timing assertion.
 */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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
