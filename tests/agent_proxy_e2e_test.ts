/**
 * The agent end to end: the real `mesh-discovery` (with its CA), the real `mesh-agent proxy`, and the stand-in
 * proxy the agent starts as it would start Envoy. The proxy gets its configuration through the agent's xDS proxy
 * (relayed over mutual TLS to the secure port), a workload certificate over SDS whose SPIFFE SAN openssl
 * confirms and whose chain verifies against the mesh root, and readiness turns 200; SIGTERM drains and exits.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import { certificateText, verifyChain } from "../shared/testing/openssl.ts";
import { startOidcIssuer } from "../shared/testing/oidc_issuer.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { needs, OPENSSL } from "../shared/testing/system_tools.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  freePort,
  RunningProgram,
  startProgram,
} from "./helpers/programs.ts";
import { startAgentProgram, writeStandInLauncher } from "./helpers/agent_program.ts";
import { poll } from "./helpers/poll.ts";

const DISCOVERY_FLAGS = ["--registries", "Mock", "--configDir", "examples/config", "--log_as_json"];

Deno.test(
  "mesh-agent proxy bootstraps a proxy, relays its xDS, serves it a certificate and reports it ready",
  needs(OPENSSL),
  async (t) => {
    const issuer = await startOidcIssuer();
    const dir = await Deno.makeTempDir({ prefix: "mesh_agent_e2e_" });
    const addresses = discoveryAddresses();
    // A plugged-in CA, so a restarted discovery server signs under the same root.
    const plugged = await makePluggedInCa(30 * 24 * 3_600_000);
    await Deno.mkdir(`${dir}/cacerts`);
    await writePluggedInCa(plugged, `${dir}/cacerts`);
    const discoveryEnv = { TOKEN_ISSUER: issuer.url, ROOT_CA_DIR: `${dir}/cacerts` };
    let discovery = startProgram("mesh-discovery", discoveryArgs(addresses, DISCOVERY_FLAGS), discoveryEnv);
    let agent: RunningProgram | undefined;
    let app: Deno.HttpServer<Deno.NetAddr> | undefined;
    try {
      await discovery.waitFor(/"msg":"discovery server started"/);
      const rootPem = await (await fetch(`http://${addresses.httpAddr}/debug/ca_roots`)).text();
      await Deno.mkdir(`${dir}/var/run/secrets/tokens`, { recursive: true });
      await Deno.mkdir(`${dir}/var/run/secrets/mesh`, { recursive: true });
      await Deno.writeTextFile(
        `${dir}/var/run/secrets/tokens/mesh-token`,
        await issuer.serviceAccountToken("example", "app"),
      );
      await Deno.writeTextFile(`${dir}/var/run/secrets/mesh/root-cert.pem`, rootPem);
      const standIn = await writeStandInLauncher(dir);
      const adminPort = freePort();
      // The application beside the proxy: probes and metrics of its own.
      const application = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
        const path = new URL(request.url).pathname;
        if (path === "/metrics") return new Response("# TYPE app_orders counter\napp_orders 3\n");
        return new Response(path, { status: path === "/alive" ? 200 : 503 });
      });
      app = application;
      const statusPort = freePort();
      agent = startAgentProgram(dir, "sidecar", standIn, {
        POD_NAME: "app-1",
        POD_NAMESPACE: "example",
        INSTANCE_IP: "10.9.9.9",
        // A short life, so a renewal happens within the test.
        SECRET_TTL: "6s",
        SECRET_ROTATION_CHECK_INTERVAL: "500ms",
        OUTPUT_CERTS: `${dir}/out-certs`,
        MESH_ORCH_APP_PROBERS: JSON.stringify({
          "/app-health/web/livez": { httpGet: { path: "/alive", port: application.addr.port } },
          "/app-health/web/readyz": { httpGet: { path: "/not-yet", port: application.addr.port } },
        }),
        MESH_METRICS_ANNOTATIONS: JSON.stringify({
          scrape: "true",
          path: "/metrics",
          port: String(application.addr.port),
        }),
        LOCAL_XDS_GENERATOR_CONFIG_SAVE_PATH: `${dir}/xds-snapshot.json`,
        PROXY_CONFIG: JSON.stringify({
          discoveryAddress: addresses.secureGRPCAddr,
          binaryPath: standIn,
          proxyAdminPort: adminPort,
          statusPort,
          terminationDrainDuration: "5s",
        }),
      });

      if (
        !await t.step("the bootstrap is written and names the agent's sockets", async () => {
          const bootstrap = await poll("the bootstrap", async () => {
            try {
              return JSON.parse(await Deno.readTextFile(`${dir}/etc/mesh/proxy/envoy-rev0.json`));
            } catch {
              return undefined;
            }
          });
          assert.equal(bootstrap.node.id, "sidecar~10.9.9.9~app-1.example~example.svc.cluster.local");
          assert.match(JSON.stringify(bootstrap.static_resources), /etc\/mesh\/proxy\/XDS/);
        })
      ) return;
      if (
        !await t.step(
          "readiness turns 200 once the proxy has its configuration through the agent",
          async () => {
            await poll("readiness", async () => {
              const response = await fetch(`http://127.0.0.1:${statusPort}/healthz/ready`);
              const body = await response.text();
              return response.status === 200 ? body : undefined;
            }, 45_000).catch((error) => {
              throw new Error(`${error.message}\nagent said:\n${agent!.stdout}${agent!.stderr}`);
            });
          },
        )
      ) return;
      await t.step(
        "the proxy holds a certificate for its identity that chains to the mesh root",
        async () => {
          const certs = await poll("the certificate over SDS", async () => {
            const held = await (await fetch(`http://127.0.0.1:${adminPort}/certs`)).json();
            return held.default && held.ROOTCA ? held : undefined;
          });
          assert.equal(certs.ROOTCA, rootPem);
          assert.match(
            await certificateText(certs.default),
            /URI:spiffe:\/\/cluster\.local\/ns\/example\/sa\/app/,
          );
          const verified = await verifyChain(dir, rootPem, certs.default, [
            "-untrusted",
            `${dir}/cacerts/ca-cert.pem`,
          ]);
          assert.equal(verified.code, 0, verified.stderr);
        },
      );
      const heldCert = async () =>
        (await (await fetch(`http://127.0.0.1:${adminPort}/certs`)).json()).default;
      await t.step(
        "the status port runs the application's rewritten probes and merges every metric",
        async () => {
          const probe = async (path: string) => {
            const response = await fetch(`http://127.0.0.1:${statusPort}${path}`);
            await response.body?.cancel();
            return response.status;
          };
          assert.equal(await probe("/app-health/web/livez"), 200);
          assert.equal(await probe("/app-health/web/readyz"), 503);
          assert.equal(await probe("/app-health/other/livez"), 404);
          const stats = await (await fetch(`http://127.0.0.1:${statusPort}/stats/prometheus`)).text();
          assert.match(stats, /^envoy_responses \d+$/m, "the proxy's");
          assert.match(stats, /^app_orders 3$/m, "the application's");
          assert.match(stats, /^total_pushes(\{[^}]*\})? \d+$/m, "the agent's");
          // The agent's own metrics moved with what they count, where the reference serves them.
          const value = (pattern: RegExp) => Number(pattern.exec(stats)?.[1] ?? "NaN");
          assert.ok(value(/^xds_proxy_requests (\S+)$/m) > 0, "the proxy's requests through the relay");
          assert.ok(value(/^xds_proxy_responses (\S+)$/m) > 0, "the responses relayed to it");
          assert.ok(value(/^num_outgoing_requests\{request_type="csr"\} (\S+)$/m) >= 1, "the CSR");
          assert.ok(value(/^startup_duration_seconds (\S+)$/m) > 0, "the startup time, once ready");
          assert.ok(value(/^scrapes_total (\S+)$/m) >= 1);
        },
      );
      await t.step(
        "OUTPUT_CERTS holds the same certificate, the key readable by its owner only",
        async () => {
          const held = await heldCert();
          const written = await poll("the written chain", async () => {
            const chain = await Deno.readTextFile(`${dir}/out-certs/cert-chain.pem`).catch(() => undefined);
            return chain === held ? chain : undefined;
          });
          assert.equal(written, held);
          assert.equal(await Deno.readTextFile(`${dir}/out-certs/root-cert.pem`), rootPem);
          assert.equal((await Deno.stat(`${dir}/out-certs/key.pem`)).mode! & 0o777, 0o600);
        },
      );
      await t.step(
        "LOCAL_XDS_GENERATOR_CONFIG_SAVE_PATH holds the clusters and listeners relayed",
        async () => {
          const snapshot = await poll("the xDS snapshot", async () => {
            const saved = JSON.parse(await Deno.readTextFile(`${dir}/xds-snapshot.json`));
            return saved[TYPE_URL.cluster] && saved[TYPE_URL.listener] ? saved : undefined;
          });
          assert.ok(snapshot[TYPE_URL.cluster].resources.length > 0);
          assert.ok(
            snapshot[TYPE_URL.cluster].resources.every((c: { name?: string }) => typeof c.name === "string"),
          );
        },
      );
      if (
        !await t.step(
          "a certificate near the end of its life is renewed and pushed to the proxy",
          async () => {
            const first = await heldCert();
            await poll(
              "a renewed certificate",
              async () => (await heldCert()) !== first ? true : undefined,
              20_000,
            );
          },
        )
      ) return;
      if (
        !await t.step("a proxy that exits is started again and gets ready again", async () => {
          await fetch(`http://127.0.0.1:${adminPort}/quitquitquit`, { method: "POST" }).then((r) =>
            r.body?.cancel()
          );
          await poll("the restarted proxy's readiness", async () => {
            const response = await fetch(`http://127.0.0.1:${statusPort}/healthz/ready`).catch(() =>
              undefined
            );
            await response?.body?.cancel();
            return response?.status === 200 && /epoch=1/.test(agent!.stdout + agent!.stderr)
              ? true
              : undefined;
          });
        })
      ) return;
      if (
        !await t.step(
          "the discovery server restarting: the agent reconnects upstream and the proxy, on the same stream, gets config again",
          async () => {
            await discovery.stop();
            discovery = startProgram(
              "mesh-discovery",
              discoveryArgs(addresses, DISCOVERY_FLAGS),
              discoveryEnv,
            );
            await discovery.waitFor(/"msg":"discovery server started"/);
            const before = await (await fetch(`http://127.0.0.1:${adminPort}/stats/prometheus`)).text();
            const responses = (text: string) => Number(/^envoy_responses (\d+)/m.exec(text)?.[1]);
            const after = await poll("config from the restarted server", async () => {
              agent!.assertRunning("the agent");
              const text = await (await fetch(`http://127.0.0.1:${adminPort}/stats/prometheus`)).text();
              return responses(text) > responses(before) ? text : undefined;
            });
            assert.match(after, /^envoy_ads_stream_failures 0$/m, "the proxy's ADS stream never failed");
            const agentStats = await (await fetch(`http://127.0.0.1:${statusPort}/stats/prometheus`)).text();
            assert.match(
              agentStats,
              /^xds_proxy_upstream_reconnects\{reason="upstream_lost"\} [1-9]\d*$/m,
              "the relay's reconnect counted",
            );
          },
        )
      ) return;
      await t.step(
        "SIGTERM drains the proxy's inbound listeners, then stops it within the drain time",
        async () => {
          const started = Date.now();
          const status = await agent!.stop("SIGTERM");
          const tookMs = Date.now() - started;
          assert.equal(status.code, 0, `${agent!.stdout}${agent!.stderr}`);
          assert.match(agent!.stderr, /stand-in: draining listeners \(inboundonly&graceful\)/);
          assert.ok(tookMs >= 4_000, `the agent waited the 5 s termination drain (took ${tookMs} ms)`);
          assert.ok(tookMs < 5_000 + 5_000, `and stopped the proxy after it (took ${tookMs} ms)`);
          await assert.rejects(() => fetch(`http://127.0.0.1:${adminPort}/ready`), "the proxy is gone");
        },
      );
    } finally {
      await agent?.stop();
      await app?.shutdown();
      await discovery.stop();
      await issuer.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
