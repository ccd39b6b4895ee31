/**
 * `USE_REMOTE_CERTS`: the plugged-in CA's files from the `cacerts` Secret of the cluster the server reads (the
 * `--orchconfig` cluster), as the reference's external control plane loads them when they are not mounted. Read
 * once, before the CA starts; a Secret that does not exist leaves the CA to `ROOT_CA_DIR` or a self-signed root.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as k8s from "@kubernetes/client-node";
import type { RateLimiter } from "./orch_client.ts";

/** The Secret's name, as the reference's (it carries no product prefix there either). */
export const CA_CERTS_SECRET = "cacerts";

/** The Secret's keys by name, decoded, and where they came from; undefined when the Secret does not exist. */
export async function readCaCertsSecret(
  client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter },
  namespace: string,
): Promise<{ source: string; files: Record<string, string> } | undefined> {
  const source = `Secret "${namespace}/${CA_CERTS_SECRET}"`;
  await client.limiter.acquire();
  let secret: k8s.V1Secret;
  try {
    secret = await client.kubeConfig.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({
      name: CA_CERTS_SECRET,
      namespace,
    });
  } catch (cause) {
    if ((cause as { code?: unknown }).code === 404) return undefined;
    throw new Error(
      `Cannot read ${source} for USE_REMOTE_CERTS from the orchestrator: ${(cause as Error).message}`,
      { cause },
    );
  }
  const files = Object.fromEntries(
    Object.entries(secret.data ?? {}).map((
      [key, value],
    ) => [key, Buffer.from(value, "base64").toString("utf8")]),
  );
  return { source, files };
}
