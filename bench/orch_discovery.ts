/**
 * The real `mesh-discovery` reading the orchestrator from an in-process test API server, for the orchestrator
 * benchmarks: its kubeconfig in a temp dir, free loopback ports, `--registries Orchestrator --log_as_json` and
 * the caller's flags and environment.
 *
 * @module
 */
import { join } from "node:path";
import type { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import {
  type DiscoveryAddresses,
  discoveryAddresses,
  discoveryArgs,
  type RunningProgram,
  startProgram,
} from "../tests/helpers/programs.ts";

/** A started server, where it listens, and how to stop it and remove its temp dir. */
export interface OrchDiscovery {
  readonly server: RunningProgram;
  readonly addresses: DiscoveryAddresses;
  /** Stops the server and removes the kubeconfig's dir. */
  stop(): Promise<void>;
}

/** Starts `mesh-discovery` against `api`, with `flags` after the orchestrator's and `env` added. */
export async function startOrchDiscovery(
  api: OrchApiServer,
  options: {
    readonly prefix: string;
    readonly flags?: readonly string[];
    readonly env?: Record<string, string>;
  },
): Promise<OrchDiscovery> {
  const dir = await Deno.makeTempDir({ prefix: options.prefix });
  await Deno.writeTextFile(join(dir, "kubeconfig"), api.kubeconfig());
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Orchestrator",
      "--orchconfig",
      join(dir, "kubeconfig"),
      "--log_as_json",
      ...(options.flags ?? []),
    ]),
    options.env ?? {},
  );
  return {
    server,
    addresses,
    async stop() {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
