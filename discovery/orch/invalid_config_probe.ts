import * as k8s from "@kubernetes/client-node";
import { excerpt } from "@mesh/shared/log/excerpt";
import type { Logger } from "@mesh/shared/log/logger";
import type { RateLimiter } from "./rate_limiter.ts";

/** The API server's words for a write a validating webhook refused. */
const DENIED = /admission webhook "[^"]+" denied the request/;
/** The API server's words for a path it does not serve (a custom resource not installed). */
const MISSING_RESOURCE = "the server could not find the requested resource";
/** The probe object: a Gateway must have at least one server. */
const INVALID_GATEWAY = "invalid-gateway";

/** The API server's message in a failed call's answer (a Status), else the error's own message. */
function textOf(error: unknown): string {
  let body = (error as { body?: unknown }).body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      return body as string;
    }
  }
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? message : String((error as Error).message ?? "");
}

/**
 * Whether the orchestrator's validating admission already rejects invalid mesh config, as the reference checks
 * before it switches its webhook to fail-closed: a dry-run create (or, when one exists, update) of a Gateway
 * without servers in `namespace` must be denied by an admission webhook. When the orchestrator does not serve
 * Gateways, the check cannot be made and passes, as in the reference. Once the check passed it is not made again.
 */
export function invalidConfigProbe(
  client: { readonly kubeConfig: k8s.KubeConfig; readonly limiter: RateLimiter; readonly log: Logger },
  namespace: string,
): () => Promise<boolean> {
  const api = client.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const target = { group: "networking.mesh.io", version: "v1alpha3", namespace, plural: "gateways" };
  const body = {
    apiVersion: "networking.mesh.io/v1alpha3",
    kind: "Gateway",
    metadata: { name: INVALID_GATEWAY, namespace },
    spec: {},
  };
  let rejected = false;
  let lastReason = "";
  const notYet = (reason: string) => {
    if (reason !== lastReason) client.log.info("not ready to switch validation to fail-closed", { reason });
    lastReason = reason;
    return false;
  };
  return async () => {
    if (rejected) return true;
    try {
      await client.limiter.acquire();
      try {
        await api.createNamespacedCustomObject({ ...target, body, dryRun: "All" });
      } catch (error) {
        if ((error as { code?: unknown }).code !== 409) throw error;
        await client.limiter.acquire();
        await api.replaceNamespacedCustomObject({ ...target, name: INVALID_GATEWAY, body, dryRun: "All" });
      }
      return notYet("a dry run of invalid config was not rejected");
    } catch (error) {
      if (DENIED.test(textOf(error))) {
        client.log.info(
          "the webhook rejected invalid config through the orchestrator; switching to fail-closed",
        );
      } else if ((error as { code?: unknown }).code === 404 && textOf(error).includes(MISSING_RESOURCE)) {
        client.log.warn(
          "the orchestrator serves no Gateways, so rejection cannot be checked; assuming ready",
        );
      } else {
        return notYet(`the dry run failed for another reason: ${excerpt(textOf(error))}`);
      }
      rejected = true;
      return true;
    }
  };
}
