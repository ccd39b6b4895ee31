/**
 * `USE_REMOTE_CERTS`: the plugged-in CA's files from the `cacerts` Secret of the cluster the server reads (the
 * `--orchconfig` cluster), as the reference's external control plane loads them when they are not mounted. Read
 * once, before the CA starts, with a deadline (`http`'s), so an API server that hangs fails startup instead of
 * holding it; a Secret that does not exist leaves the CA to `ROOT_CA_DIR` or a self-signed root.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { OrchHttp } from "./orch_http.ts";

/** The Secret's name, as the reference's (it carries no product prefix there either). */
export const CA_CERTS_SECRET = "cacerts";

/** How long the one read may take (not a setting). */
export const CA_CERTS_TIMEOUT_MS = 10_000;

/**
 * The Secret's keys by name, decoded, and where they came from; undefined when the Secret does not exist.
 *
 * @throws {Error} naming the Secret when the API server did not answer, or answered other than 200 or 404
 */
export async function readCaCertsSecret(
  http: OrchHttp,
  namespace: string,
): Promise<{ source: string; files: Record<string, string> } | undefined> {
  const source = `Secret "${namespace}/${CA_CERTS_SECRET}"`;
  const failed = (why: string, cause?: unknown) =>
    new Error(`Cannot read ${source} for USE_REMOTE_CERTS from the orchestrator: ${why}`, { cause });
  let response;
  try {
    response = await http({
      method: "GET",
      path: `/api/v1/namespaces/${namespace}/secrets/${CA_CERTS_SECRET}`,
    });
  } catch (cause) {
    throw failed((cause as Error).message, cause);
  }
  if (response.status === 404) return undefined;
  if (response.status !== 200) {
    throw failed(`HTTP ${response.status}; expected 200, or 404 when there is none`);
  }
  const data = (response.body as { data?: Record<string, unknown> } | undefined)?.data ?? {};
  const files: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === "string") files[key] = Buffer.from(value, "base64").toString("utf8");
  }
  return { source, files };
}
