/**
 * Test support for the orchestrator writers: a client of the test API server, plain reads of what it stores,
 * and a duty gate that never leads.
 *
 * @module
 */
import type { DutyGate } from "../../shared/lifecycle/duty_gate.ts";
import type { ApiObject, OrchApiServer } from "../../shared/testing/orch_api_server.ts";
import { silentLogger } from "../../shared/log/logger.ts";
import { loadOrchConfig, RateLimiter } from "./orch_client.ts";
import type { InformerClient } from "./resilient_informer.ts";

/** A client of `api` through a kubeconfig written into `dir`. */
export async function clientOf(api: OrchApiServer, dir: string): Promise<InformerClient> {
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  return {
    kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    limiter: new RateLimiter(1000, 100),
    log: silentLogger,
    retryMs: 50,
  };
}

/** The object stored at `path` of `api`, or undefined on 404. */
export async function stored(api: OrchApiServer, path: string): Promise<ApiObject | undefined> {
  const response = await fetch(`${api.url}${path}`);
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  return await response.json() as ApiObject;
}

/** A gate of a replica that never leads `duty`. */
export function neverLeader(duty: string): DutyGate {
  return { duty, leading: () => false, whileLeading: () => () => {} };
}
