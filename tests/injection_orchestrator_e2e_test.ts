/**
 * Sidecar injection end to end: the real `mesh-discovery` (its injector files mounted where the reference
 * mounts them) reads a test API server (in this process) on which a user installed the example webhook
 * configurations with kubectl. `kubectl apply` of a pod into a namespace labelled `mesh-injection=enabled` goes
 * through the API server's mutating admission to `/inject`, verified with the caBundle mesh-discovery keeps;
 * the test then runs the stored pod's injected containers as a node would: the init container's
 * `mesh-agent mesh-iptables` as a dry run, and the proxy container's `mesh-agent proxy sidecar` with its
 * environment and mounts (a projected token the API server's TokenReview accepts, the namespace's root
 * certificate ConfigMap), which gets a certificate for the pod's service account and configuration for the
 * pod's service. Pods the policy skips are stored as sent; applying again changes nothing.
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { certificateText } from "../shared/testing/openssl.ts";
import { type ApiObject, OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { KUBECTL, needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { startAgentCommand, writeStandInLauncher } from "./helpers/agent_program.ts";
import { containerArgs, containerEnv, containerOf, mountVolumes } from "./helpers/kubelet.ts";
import { poll } from "./helpers/poll.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  freePort,
  orchestratorFlags,
  type RunningProgram,
  runProgram,
  startProgram,
} from "./helpers/programs.ts";

const FIXTURES = new URL("./fixtures/injection/inputs/", import.meta.url);
const EXAMPLE_WEBHOOKS = new URL("../examples/orchestrator/webhooks.yaml", import.meta.url).pathname;
const MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/mesh-sidecar-injector";
const POD_IP = "10.9.9.10";

type Obj = Record<string, unknown>;

async function kubectl(dir: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("kubectl", {
    args: ["--kubeconfig", `${dir}/kubeconfig`, "--cache-dir", `${dir}/cache`, ...args],
    env: { HOME: dir },
    stdin: "null",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

async function getPod(api: OrchApiServer, namespace: string, name: string): Promise<ApiObject> {
  const response = await fetch(`${api.url}/api/v1/namespaces/${namespace}/pods/${name}`);
  assert.equal(response.status, 200, `pod ${namespace}/${name}`);
  return await response.json();
}

/** A pod as a Deployment's template makes it (labels, service account, one app container with a port). */
function podManifest(namespace: string, name: string, extra: { annotations?: Obj; spec?: Obj } = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      labels: { app: "reviews", version: "v1" },
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: {
      serviceAccountName: "reviews",
      containers: [{ name: "reviews", image: "example/reviews:1", ports: [{ containerPort: 9080 }] }],
      ...extra.spec,
    },
  };
}

/** Writes the injector files, the mesh config and the kubeconfig mesh-discovery reads from `dir`. */
async function writeDiscoveryFiles(dir: string, api: OrchApiServer, proxy: Obj, caAddress: string) {
  await Deno.mkdir(`${dir}/var/lib/mesh/inject`, { recursive: true });
  await Deno.mkdir(`${dir}/config`);
  await Deno.copyFile(new URL("default.config.yaml", FIXTURES), `${dir}/var/lib/mesh/inject/config`);
  const values = JSON.parse(await Deno.readTextFile(new URL("default.values.json", FIXTURES)));
  // As an operator whose control plane is reached at an address of its own sets the chart value.
  values.global.caAddress = caAddress;
  await Deno.writeTextFile(`${dir}/var/lib/mesh/inject/values`, JSON.stringify(values));
  await Deno.writeTextFile(
    `${dir}/mesh.yaml`,
    stringify({ trustDomain: "cluster.local", defaultConfig: proxy }),
  );
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
}

/** The names of the clusters or listeners the stand-in proxy holds. */
async function held(adminPort: number, what: "clusters" | "listeners"): Promise<string[]> {
  const body = await (await fetch(`http://127.0.0.1:${adminPort}/${what}?format=json`)).json();
  return (body[`${what.slice(0, -1)}_statuses`] as { name: string }[]).map((s) => s.name);
}

Deno.test(
  "A pod applied into a mesh-injection=enabled namespace is stored injected, and its containers join the mesh",
  needs(KUBECTL, OPENSSL),
  async (t) => {
    const api = OrchApiServer.start();
    const dir = await Deno.makeTempDir({ prefix: "mesh_inject_e2e_" });
    const podDir = `${dir}/pod`;
    await Deno.mkdir(podDir);
    const addresses = discoveryAddresses();
    const standIn = await writeStandInLauncher(dir);
    const adminPort = freePort();
    // The operator's proxy defaults (mesh config), which injection writes into PROXY_CONFIG.
    await writeDiscoveryFiles(dir, api, {
      discoveryAddress: addresses.secureGRPCAddr,
      binaryPath: standIn,
      proxyAdminPort: adminPort,
      statusPort: freePort(),
    }, addresses.secureGRPCAddr);
    const namespaces: [string, Record<string, string>][] = [
      ["shop", { "mesh-injection": "enabled" }],
      ["plain", {}],
      ["mesh-system", {}],
    ];
    for (const [name, labels] of namespaces) {
      api.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels },
        status: { phase: "Active" },
      });
    }
    api.apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "reviews", namespace: "shop" },
      spec: { selector: { app: "reviews" }, ports: [{ name: "http", port: 9080 }], clusterIP: "10.96.0.20" },
    });
    api.apply({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "reviews", namespace: "shop" },
      subsets: [{
        addresses: [{ ip: POD_IP, targetRef: { kind: "Pod", name: "reviews-1", namespace: "shop" } }],
        ports: [{ name: "http", port: 9080 }],
      }],
    });
    await kubectl(dir, "apply", "--validate=false", "-f", EXAMPLE_WEBHOOKS);
    // The API server reaches the webhook's service at the server's HTTPS address.
    api.validating.serve("mesh-system/meshd", `https://localhost:${addresses.httpsAddr.split(":").at(-1)}`);
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, [
        ...orchestratorFlags(`${dir}/kubeconfig`),
        "--configDir",
        `${dir}/config`,
        "--meshConfig",
        `${dir}/mesh.yaml`,
        "--log_as_json",
      ]),
      {},
      dir,
    );
    let agent: RunningProgram | undefined;
    const apply = async (manifest: Obj, file: string) => {
      await Deno.writeTextFile(`${dir}/${file}`, JSON.stringify(manifest));
      return await kubectl(dir, "apply", "--validate=false", "-f", `${dir}/${file}`);
    };
    try {
      await server.waitFor(/"msg":"discovery server started"/);
      await waitFor(async () => {
        const response = await fetch(`${api.url}${MUTATING}`);
        const hooks = await response.json() as { webhooks: { clientConfig: { caBundle?: string } }[] };
        return (hooks.webhooks[0].clientConfig.caBundle ?? "") !== "";
      }, "the injection webhook's caBundle");

      const manifest = podManifest("shop", "reviews-1");
      let injected!: ApiObject;
      await t.step("kubectl apply stores the pod with mesh-init and mesh-proxy", async () => {
        await apply(manifest, "reviews-1.json");
        injected = await getPod(api, "shop", "reviews-1");
        const spec = injected.spec as { initContainers?: Obj[]; containers: Obj[] };
        assert.deepEqual(spec.initContainers?.map((c) => c.name), ["mesh-init"]);
        assert.deepEqual(spec.containers.map((c) => c.name), ["reviews", "mesh-proxy"]);
        assert.ok((injected.metadata.annotations as Obj)["sidecar.mesh.io/status"]);
        assert.deepEqual(api.mutating.calls, ["sidecar-injector.mesh.io patched"]);
      });

      await t.step("the injected init container's mesh-iptables plans the redirect", async () => {
        const init = containerOf(injected, "mesh-init", true);
        const args = containerArgs(init, containerEnv(injected, init));
        assert.equal(args[0], "mesh-iptables");
        const run = await runProgram("mesh-agent", [...args, "--dry-run"]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001/);
        assert.match(run.stdout, /-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006/);
        assert.match(run.stdout, /-A MESH_OUTPUT -m owner --uid-owner 1337 -j RETURN/);
        assert.match(run.stdout, /-A MESH_INBOUND -p tcp --dport 15090 -j RETURN/);
      });

      await t.step(
        "the injected proxy container gets a certificate for the pod's service account",
        async () => {
          // As the node does once the pod runs: its address in the status, the mounts, then the command.
          api.apply({ ...injected, status: { phase: "Running", podIP: POD_IP, hostIP: "10.0.0.1" } });
          const running = await getPod(api, "shop", "reviews-1");
          const proxy = containerOf(running, "mesh-proxy");
          const env = containerEnv(running, proxy);
          assert.equal(env.JWT_POLICY, "third-party-jwt");
          await waitFor(async () => {
            const response = await fetch(`${api.url}/api/v1/namespaces/shop/configmaps/mesh-ca-root-cert`);
            await response.body?.cancel();
            return response.ok;
          }, "the root certificate ConfigMap in shop");
          await mountVolumes(api, running, proxy, podDir);
          const args = containerArgs(proxy, env);
          assert.deepEqual(args.slice(0, 4), ["proxy", "sidecar", "--domain", "shop.svc.cluster.local"]);
          agent = startAgentCommand(podDir, args, standIn, env);
          const certs = await poll("the certificate over SDS", async () => {
            try {
              const secrets = await (await fetch(`http://127.0.0.1:${adminPort}/certs`)).json();
              return secrets.default ? secrets : undefined;
            } catch {
              return undefined;
            }
          }, 45_000).catch((error) => {
            throw new Error(`${error.message}\nagent said:\n${agent!.stdout}${agent!.stderr}`);
          });
          assert.match(
            await certificateText(certs.default),
            /URI:spiffe:\/\/cluster\.local\/ns\/shop\/sa\/reviews/,
          );
          assert.ok(api.tokenReviews.reviews.some((r) => r.authenticated && r.audiences[0] === "mesh-ca"));
        },
      );

      await t.step("its stand-in proxy receives the pod's service's clusters and listeners", async () => {
        await poll("the service's clusters and listeners", async () => {
          try {
            const [clusters, listeners] = [
              await held(adminPort, "clusters"),
              await held(adminPort, "listeners"),
            ];
            return clusters.includes("outbound|9080||reviews.shop.svc.cluster.local") &&
                clusters.includes("inbound|9080||") && listeners.includes("0.0.0.0_9080")
              ? true
              : undefined;
          } catch {
            return undefined;
          }
        }, 20_000).catch(async (error) => {
          const seen = [await held(adminPort, "clusters"), await held(adminPort, "listeners")];
          throw new Error(`${error.message}; held ${JSON.stringify(seen)}`);
        });
      });

      await t.step("pods the policy skips are stored as sent", async () => {
        const skipped = [
          podManifest("plain", "unlabelled-namespace"),
          podManifest("shop", "opted-out", { annotations: { "sidecar.mesh.io/inject": "false" } }),
          podManifest("shop", "host-network", { spec: { hostNetwork: true } }),
        ];
        for (const [i, pod] of skipped.entries()) {
          await apply(pod, `skipped-${i}.json`);
          const meta = pod.metadata as { namespace: string; name: string; annotations?: Obj };
          const stored = await getPod(api, meta.namespace, meta.name);
          assert.deepEqual(stored.spec, pod.spec, meta.name);
          assert.deepEqual(stored.metadata.labels, (pod.metadata as Obj).labels, meta.name);
          const annotations = { ...stored.metadata.annotations as Obj };
          delete annotations["kubectl.kubernetes.io/last-applied-configuration"];
          assert.deepEqual(annotations, meta.annotations ?? {}, meta.name);
        }
        // The unlabelled namespace's pod never reached the webhook; the other two were skipped by it.
        assert.equal(api.mutating.calls.length, 3);
      });

      await t.step("applying the injected pod again changes nothing", async () => {
        const before = await getPod(api, "shop", "reviews-1");
        await apply(manifest, "reviews-1.json");
        assert.deepEqual(await getPod(api, "shop", "reviews-1"), before);
        // The stored, injected pod created anew goes through injection again and comes out as it went in.
        const again = structuredClone(injected) as Obj & ApiObject;
        const metadata: Obj = { ...again.metadata, name: "reviews-2" };
        for (const key of ["uid", "resourceVersion", "creationTimestamp"]) delete metadata[key];
        delete (metadata.annotations as Obj)["kubectl.kubernetes.io/last-applied-configuration"];
        await Deno.writeTextFile(`${dir}/again.json`, JSON.stringify({ ...again, metadata }));
        await kubectl(dir, "create", "--validate=false", "-f", `${dir}/again.json`);
        const reinjected = await getPod(api, "shop", "reviews-2");
        assert.deepEqual(reinjected.spec, injected.spec);
        assert.deepEqual(reinjected.metadata.labels, injected.metadata.labels);
        assert.deepEqual(reinjected.metadata.annotations, metadata.annotations);
      });
    } finally {
      await agent?.stop();
      await server.stop();
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
