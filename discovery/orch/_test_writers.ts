/**
 * Test support for the orchestrator writers: a client of the test API server, plain reads of what it stores,
 * and a duty gate the test hands out and takes back.
 *
 * @module
 */
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import type { ApiObject, OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { silentLogger } from "@mesh/shared/log/logger";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
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

/** A gate the test hands the duty to and takes it from. */
export class SwitchableGate implements DutyGate {
  #leading = false;
  readonly #runs = new Set<(signal: AbortSignal) => void>();
  #controller?: AbortController;

  constructor(readonly duty: string) {}

  leading(): boolean {
    return this.#leading;
  }

  whileLeading(run: (signal: AbortSignal) => void): () => void {
    this.#runs.add(run);
    if (this.#controller) run(this.#controller.signal);
    return () => this.#runs.delete(run);
  }

  /** This replica wins the duty. */
  win(): void {
    this.#leading = true;
    this.#controller = new AbortController();
    for (const run of this.#runs) run(this.#controller.signal);
  }

  /** This replica loses the duty. */
  lose(): void {
    this.#leading = false;
    this.#controller?.abort();
    this.#controller = undefined;
  }
}
