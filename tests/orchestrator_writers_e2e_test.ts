/**
 * A workload joins the mesh on the orchestrator, end to end: the real `mesh-discovery` with its CA reads a test
 * API server (in this process) and keeps the two webhook configurations pointing at its webhook (caBundle the
 * roots its serving certificate chains to, the validating one fail-closed once ready), keeps the root
 * certificate ConfigMap in every namespace, and signs a CSR for a service-account token the API server's
 * TokenReview accepts, for that service account alone. kubectl changes things as a user would.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import {
  caServiceDefinition,
  type CertificateResponseMessage,
  MESH_CA_SERVICE,
} from "../proto/ca_service.ts";
import { createCertificateRequest, generateKeyPair } from "../shared/pki/mod.ts";
import { certificateText } from "../shared/testing/openssl.ts";
import { OrchApiServer } from "../shared/testing/orch_api_server.ts";
import { KUBECTL, needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  freePort,
  orchestratorFlags,
  type RunningProgram,
  startProgram,
} from "./helpers/programs.ts";
import { startAgentProgram, writeStandInLauncher } from "./helpers/agent_program.ts";
import { poll } from "./helpers/poll.ts";

const GROUP = "/apis/admissionregistration.k8s.io/v1";
const MUTATING = `${GROUP}/mutatingwebhookconfigurations/mesh-sidecar-injector`;
const VALIDATING = `${GROUP}/validatingwebhookconfigurations/meshd-mesh-system`;

/** The example webhook configurations a user installs. */
const EXAMPLE_WEBHOOKS = new URL("../examples/orchestrator/webhooks.yaml", import.meta.url).pathname;

type Hooks = { webhooks: { clientConfig: { caBundle?: string }; failurePolicy: string }[] };
type ConfigMap = { data?: Record<string, string> };

async function get<T>(api: OrchApiServer, path: string): Promise<T | undefined> {
  const response = await fetch(`${api.url}${path}`);
  if (response.status !== 200) {
    await response.body?.cancel();
    return undefined;
  }
  return await response.json() as T;
}

async function kubectl(dir: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("kubectl", {
    args: ["--kubeconfig", `${dir}/kubeconfig`, "--cache-dir", `${dir}/cache`, ...args],
    env: { HOME: dir },
    stdin: "null",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

/** The root certificate ConfigMap's PEM in `namespace`, as kubectl shows it. */
async function rootCertIn(dir: string, namespace: string): Promise<string> {
  const out = await new Deno.Command("kubectl", {
    args: [
      "--kubeconfig",
      `${dir}/kubeconfig`,
      "--cache-dir",
      `${dir}/cache`,
      "-n",
      namespace,
      "get",
      "configmap",
      "mesh-ca-root-cert",
      "-o",
      "jsonpath={.data.root-cert\\.pem}",
    ],
    env: { HOME: dir },
    stdin: "null",
    stderr: "null",
  }).output();
  return out.code === 0 ? new TextDecoder().decode(out.stdout) : "";
}

Deno.test(
  "mesh-discovery keeps the webhook configurations and root ConfigMaps in place and signs for reviewed tokens",
  needs(KUBECTL, OPENSSL),
  async (t) => {
    const api = OrchApiServer.start();
    const dir = await Deno.makeTempDir({ prefix: "mesh_orch_writers_e2e_" });
    await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
    for (const name of ["default", "shop"]) {
      api.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name }, status: { phase: "Active" } });
    }
    await kubectl(dir, "apply", "--validate=false", "-f", EXAMPLE_WEBHOOKS);
    const addresses = discoveryAddresses();
    // The API server reaches the webhook's service at the server's HTTPS address.
    api.validating.serve("mesh-system/meshd", `https://localhost:${addresses.httpsAddr.split(":").at(-1)}`);
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, [
        ...orchestratorFlags(`${dir}/kubeconfig`),
        "--configDir",
        dir,
        "--log_as_json",
      ]),
    );
    const clients: grpc.Client[] = [];
    let agent: RunningProgram | undefined;
    let rootPem = "";
    try {
      await server.waitFor(/"msg":"discovery server started"/);

      await t.step(
        "both configurations carry the roots of the webhook's certificate; validation fails closed",
        async () => {
          await waitFor(async () => {
            const hooks = [await get<Hooks>(api, MUTATING), await get<Hooks>(api, VALIDATING)];
            return hooks.every((h) => (h?.webhooks[0].clientConfig.caBundle ?? "") !== "") &&
              hooks[1]!.webhooks[0].failurePolicy === "Fail";
          }, "the caBundles and failurePolicy Fail");
          const ready = await fetch(`http://${addresses.httpAddr}/ready`);
          assert.equal(ready.status, 200, "Fail only once the server is ready");
          await ready.body?.cancel();
          assert.ok(
            api.validating.calls.includes("validation.mesh.io denied"),
            "and once a dry run of invalid config was denied through the API server",
          );
          assert.match(
            server.stdout + server.stderr,
            /"failurePolicy":"Ignore".*\n(.*\n)*.*"failurePolicy":"Fail"/,
            "patched with Ignore first, then Fail",
          );
          const bundles = [await get<Hooks>(api, MUTATING), await get<Hooks>(api, VALIDATING)].map((h) =>
            Buffer.from(h!.webhooks[0].clientConfig.caBundle!, "base64").toString("utf8")
          );
          assert.equal(bundles[0], bundles[1]);
          rootPem = bundles[0];
          assert.match(rootPem, /^-----BEGIN CERTIFICATE-----/);
          // The API server verifies the webhook with this bundle: so does the test.
          const client = Deno.createHttpClient({ caCerts: [rootPem] });
          try {
            const port = addresses.httpsAddr.split(":").at(-1);
            const response = await fetch(`https://localhost:${port}/httpsReady`, { client });
            assert.equal(response.status, 200);
            await response.body?.cancel();
          } finally {
            client.close();
          }
        },
      );

      await t.step(
        "the API server, trusting that bundle, has the webhook refuse an invalid Gateway",
        async () => {
          await Deno.writeTextFile(
            `${dir}/gateway.yaml`,
            "apiVersion: networking.mesh.io/v1alpha3\nkind: Gateway\nmetadata:\n  name: empty\n  namespace: shop\n" +
              "spec: {}\n",
          );
          const out = await new Deno.Command("kubectl", {
            args: [
              "--kubeconfig",
              `${dir}/kubeconfig`,
              "--cache-dir",
              `${dir}/cache`,
              "apply",
              "--validate=false",
            ]
              .concat(["-f", `${dir}/gateway.yaml`]),
            env: { HOME: dir },
            stdin: "null",
          }).output();
          assert.notEqual(out.code, 0);
          assert.match(
            new TextDecoder().decode(out.stderr),
            /admission webhook "validation\.mesh\.io" denied the request/,
          );
        },
      );

      await t.step("an edited caBundle is put back", async () => {
        // As a user would: take what is stored, change the bundle, put it back.
        const edited = (await get<Hooks>(api, VALIDATING))!;
        edited.webhooks[0].clientConfig.caBundle = Buffer.from("not a root").toString("base64");
        await Deno.writeTextFile(`${dir}/validating.json`, JSON.stringify(edited));
        await kubectl(dir, "replace", "--validate=false", "-f", `${dir}/validating.json`);
        await waitFor(async () => {
          const hooks = await get<Hooks>(api, VALIDATING);
          return hooks?.webhooks[0].clientConfig.caBundle === Buffer.from(rootPem).toString("base64") &&
            hooks.webhooks[0].failurePolicy === "Fail";
        }, "the caBundle restored");
      });

      await t.step("every namespace has the root ConfigMap: new, deleted and edited ones alike", async () => {
        await waitFor(async () => await rootCertIn(dir, "default") === rootPem, "the ConfigMap in default");
        await waitFor(async () => await rootCertIn(dir, "shop") === rootPem, "the ConfigMap in shop");
        await kubectl(dir, "create", "namespace", "orders");
        await waitFor(
          async () => await rootCertIn(dir, "orders") === rootPem,
          "the ConfigMap in a new namespace",
        );
        await kubectl(dir, "-n", "orders", "delete", "configmap", "mesh-ca-root-cert");
        await waitFor(
          async () => await rootCertIn(dir, "orders") === rootPem,
          "the deleted ConfigMap restored",
        );
        await Deno.writeTextFile(
          `${dir}/edited.yaml`,
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mesh-ca-root-cert\n  namespace: orders\n" +
            "data:\n  root-cert.pem: tampered\n",
        );
        await kubectl(dir, "apply", "--validate=false", "-f", `${dir}/edited.yaml`);
        await waitFor(
          async () => await rootCertIn(dir, "orders") === rootPem,
          "the edited ConfigMap restored",
        );
        assert.equal(
          (await get<ConfigMap>(api, "/api/v1/namespaces/orders/configmaps/mesh-ca-root-cert"))!
            .data!["root-cert.pem"],
          rootPem,
        );
      });

      const Client = grpc.makeGenericClientConstructor(caServiceDefinition(MESH_CA_SERVICE), MESH_CA_SERVICE);
      const create = (csr: string, token: string) => {
        const client = new Client(
          addresses.secureGRPCAddr,
          grpc.credentials.createSsl(Buffer.from(rootPem)),
          {
            "grpc.ssl_target_name_override": "localhost",
          },
        );
        clients.push(client);
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${token}`);
        return new Promise<CertificateResponseMessage>((resolve, reject) =>
          // deno-lint-ignore no-explicit-any
          (client as any).CreateCertificate(
            { csr, validityDuration: 3600 },
            metadata,
            (error: grpc.ServiceError | null, response: CertificateResponseMessage) =>
              error ? reject(error) : resolve(response),
          )
        );
      };
      // The CSR asks for another identity: the CA must sign for the token's alone.
      const csr = await createCertificateRequest(await generateKeyPair({ algorithm: "ECDSA" }), {
        uris: ["spiffe://cluster.local/ns/kube-system/sa/admin"],
      });

      await t.step("a token the TokenReview accepts gets a certificate for its service account", async () => {
        const token = api.tokenReviews.issue("shop", "ratings", ["mesh-ca"]);
        const { certChain } = await create(csr, token);
        const text = await certificateText(certChain[0]);
        assert.match(text, /URI:spiffe:\/\/cluster\.local\/ns\/shop\/sa\/ratings/);
        assert.doesNotMatch(text, /kube-system/);
        assert.deepEqual(api.tokenReviews.reviews.at(-1), { audiences: ["mesh-ca"], authenticated: true });
      });

      await t.step("a token the TokenReview rejects is refused, and not echoed", async () => {
        const elsewhere = api.tokenReviews.issue("shop", "ratings", ["another-audience"]);
        const revoked = api.tokenReviews.issue("shop", "ratings", ["mesh-ca"]);
        api.tokenReviews.revoke(revoked);
        for (const token of [elsewhere, revoked]) {
          await assert.rejects(
            () => create(csr, token),
            (e: grpc.ServiceError) =>
              e.code === grpc.status.UNAUTHENTICATED && /orchestrator token review/.test(e.details) &&
              !e.details.includes(token) && !e.details.includes(token.split(".")[1]),
          );
        }
        assert.doesNotMatch(server.stdout + server.stderr, new RegExp(revoked.split(".")[2]), "nor logged");
      });

      await t.step(
        "an agent proves its identity with the token JWT_POLICY names and trusts the root ConfigMap",
        async () => {
          const agentDir = `${dir}/pod`;
          await Deno.mkdir(`${agentDir}/var/run/secrets/tokens`, { recursive: true });
          await Deno.mkdir(`${agentDir}/var/run/secrets/mesh`, { recursive: true });
          // Where the injected pod mounts its projected token and the namespace's mesh-ca-root-cert.
          await Deno.writeTextFile(
            `${agentDir}/var/run/secrets/tokens/mesh-token`,
            api.tokenReviews.issue("shop", "reviews", ["mesh-ca"]),
          );
          await Deno.writeTextFile(
            `${agentDir}/var/run/secrets/mesh/root-cert.pem`,
            await rootCertIn(dir, "shop"),
          );
          const standIn = await writeStandInLauncher(agentDir);
          const adminPort = freePort();
          agent = startAgentProgram(agentDir, "sidecar", standIn, {
            POD_NAME: "reviews-1",
            POD_NAMESPACE: "shop",
            INSTANCE_IP: "10.9.9.10",
            JWT_POLICY: "third-party-jwt",
            PROXY_CONFIG: JSON.stringify({
              discoveryAddress: addresses.secureGRPCAddr,
              binaryPath: standIn,
              proxyAdminPort: adminPort,
              statusPort: freePort(),
            }),
          });
          const certs = await poll("the certificate over SDS", async () => {
            try {
              const held = await (await fetch(`http://127.0.0.1:${adminPort}/certs`)).json();
              return held.default ? held : undefined;
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

      await t.step(
        "one address's made-up tokens past its review budget never reach the orchestrator",
        async () => {
          const reviewsBefore = api.tokenReviews.reviews.length;
          const details: string[] = [];
          for (let i = 0; i < 15; i++) {
            await create(csr, `made-up-${i}`).catch((e: grpc.ServiceError) => details.push(e.details));
          }
          assert.equal(details.length, 15, "every made-up token is refused");
          const overBudget = details.filter((d) =>
            /token reviews from 127\.0\.0\.1 are past their budget of 10 at once and 1 a second/.test(d)
          );
          assert.ok(overBudget.length >= 4, `refused past the budget: ${overBudget.length} of 15`);
          assert.ok(
            api.tokenReviews.reviews.length - reviewsBefore <= 11,
            "the orchestrator was asked at most 11 times",
          );
        },
      );
    } finally {
      await agent?.stop();
      for (const client of clients) client.close();
      await server.stop();
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "When the CA rotates its root, the webhook caBundles and every root ConfigMap follow",
  needs(KUBECTL),
  async () => {
    const api = OrchApiServer.start();
    const dir = await Deno.makeTempDir({ prefix: "mesh_orch_writers_e2e_" });
    await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
    await Deno.mkdir(`${dir}/no-ca`);
    api.apply({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "shop" },
      status: { phase: "Active" },
    });
    await kubectl(dir, "apply", "--validate=false", "-f", EXAMPLE_WEBHOOKS);
    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, [
        ...orchestratorFlags(`${dir}/kubeconfig`),
        "--configDir",
        dir,
        "--log_as_json",
      ]),
      {
        ROOT_CA_DIR: `${dir}/no-ca`,
        // A 60 s self-signed root rotated once 5% of its life is gone, checked every second.
        CASERVER_SELF_SIGNED_CA_CERT_TTL: "60s",
        CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: "95",
        CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: "1s",
        DEFAULT_WORKLOAD_CERT_TTL: "30s",
      },
    );
    const roots = async () => await (await fetch(`http://${addresses.httpAddr}/debug/ca_roots`)).text();
    const bundle = async (path: string) =>
      Buffer.from((await get<Hooks>(api, path))?.webhooks[0].clientConfig.caBundle ?? "", "base64")
        .toString();
    const configMap = async () =>
      (await get<ConfigMap>(api, "/api/v1/namespaces/shop/configmaps/mesh-ca-root-cert"))?.data
        ?.["root-cert.pem"];
    try {
      await server.waitFor(/"msg":"discovery server started"/);
      await server.waitFor(/CA rotated its self-signed root/, 20_000);
      await waitFor(
        async () => {
          const now = await roots();
          return (now.match(/BEGIN CERTIFICATE/g) ?? []).length >= 2 && await bundle(MUTATING) === now &&
            await bundle(VALIDATING) === now && await configMap() === now;
        },
        "the rotated roots in both configurations and the ConfigMap",
        20_000,
      );
    } finally {
      await server.stop();
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
