/**
 * Proxyless gRPC end to end: the real `mesh-discovery discovery` serves a config directory; two real gRPC
 * backends answer with their names; gRPC's own xDS client (`@grpc/grpc-js-xds`, `xds:///` target, in its own
 * process so its bootstrap comes from the environment) routes calls by the VirtualService's weights, and
 * follows a change of the weights on disk.
 */
import assert from "node:assert/strict";
import { startGrpcBackend } from "./helpers/grpc_backend.ts";
import { GREETER_HOST, GREETER_PORT, writeGreeterConfig, writeGreeterSplit } from "./helpers/greeter_mesh.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./helpers/programs.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { type CallResult, grpcBootstrap, XdsClientProcess } from "./helpers/xds_client_process.ts";

const CALLS = 200;
/** How long the first config, or a weight change, may take to reach the client: file watch, debounce, push. */
const CONVERGENCE_MS = 30_000;

function describe(result: CallResult): string {
  return JSON.stringify(result);
}

Deno.test("Proxyless gRPC routes by VirtualService weights from mesh-discovery and follows changes on disk", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "mesh_grpc_e2e_" });
  const v1 = await startGrpcBackend("v1");
  const v2 = await startGrpcBackend("v2");
  const addresses = discoveryAddresses();
  let server: ReturnType<typeof startProgram> | undefined;
  let client: XdsClientProcess | undefined;
  try {
    await writeGreeterConfig(dir, { v1: v1.port, v2: v2.port }, 80, 20);
    server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, ["--registries", "Mock", "--configDir", dir, "--log_as_json"]),
    );
    await server.waitFor(/"msg":"discovery server started"/);
    client = XdsClientProcess.start(
      `xds:///${GREETER_HOST}:${GREETER_PORT}`,
      grpcBootstrap(addresses.grpcAddr, {
        id: "sidecar~127.0.0.1~client.example~example.svc.cluster.local",
        metadata: { GENERATOR: "grpc", NAMESPACE: "example" },
      }),
    );
    const active = client;

    // Each later step needs the one before; a failure stops the test instead of waiting on every call.
    const reached = await t.step(
      "the client resolves the target over xDS and reaches a backend",
      async () => {
        let last: CallResult | undefined;
        await waitFor(
          async () => Object.keys((last = await active.call(1)).errors).length === 0,
          "a call that succeeds",
          CONVERGENCE_MS,
          200,
        ).catch(() => {});
        const logs = `${server?.stdout ?? ""}${server?.stderr ?? ""}`.split("\n").slice(-15).join("\n");
        assert.deepEqual(
          last?.errors,
          {},
          `no call succeeded: ${last && describe(last)}\ndiscovery said:\n${logs}`,
        );
      },
    );
    if (!reached) return;

    const split = await t.step("an 80/20 split sends most calls to v1 and the rest to v2", async () => {
      const result = await active.call(CALLS);
      assert.deepEqual(result.errors, {}, describe(result));
      const toV1 = result.counts.v1 ?? 0;
      const toV2 = result.counts.v2 ?? 0;
      assert.equal(toV1 + toV2, CALLS, describe(result));
      // Loose bounds: the chance of a fair 80/20 split falling outside them in 200 calls is negligible.
      assert.ok(
        toV1 >= CALLS * 0.6 && toV1 <= CALLS * 0.95,
        `v1 got ${toV1} of ${CALLS}: ${describe(result)}`,
      );
      assert.ok(toV2 > 0, describe(result));
    });

    if (!split) return;
    await t.step("the client acknowledged the latest response of every type (no NACK)", async () => {
      interface TypeSync {
        nonceSent?: string;
        nonceAcked?: string;
      }
      let types: Record<string, TypeSync> = {};
      const acked = () =>
        ["LDS", "RDS", "CDS", "EDS"].every((t) => types[t]?.nonceSent === types[t]?.nonceAcked);
      await waitFor(
        async () => {
          const syncz: { proxyId: string; types: Record<string, TypeSync> }[] =
            await (await fetch(`http://${addresses.monitoringAddr}/debug/syncz`)).json();
          types = syncz.find((c) => c.proxyId === "client.example")?.types ?? {};
          return acked();
        },
        "every type acknowledged",
        5_000,
        100,
      ).catch(() => {});
      assert.deepEqual(Object.keys(types).sort(), ["CDS", "EDS", "LDS", "RDS"], JSON.stringify(types));
      assert.ok(acked(), JSON.stringify(types));
    });

    await t.step("after the weights change to 0/100 on disk, every call goes to v2", async () => {
      await writeGreeterSplit(dir, 0, 100);
      let last: CallResult | undefined;
      await waitFor(
        async () => ((last = await active.call(20)).counts.v2 ?? 0) === 20,
        "every call to v2",
        CONVERGENCE_MS,
        200,
      ).catch(() => {});
      assert.equal(last?.counts.v2, 20, `the change never arrived: ${last && describe(last)}`);
      const settled = await active.call(CALLS);
      assert.deepEqual(settled.counts, { v2: CALLS }, describe(settled));
      assert.deepEqual(settled.errors, {}, describe(settled));
    });
  } finally {
    await client?.close();
    await server?.stop();
    await v1.close();
    await v2.close();
    await Deno.remove(dir, { recursive: true });
  }
});
