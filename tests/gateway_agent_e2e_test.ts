/**
 * A gateway whose credentials come from its own agent (`MESHD_ENABLE_SDS_SERVER=false`), end to end: the real
 * `mesh-discovery` generates the gateway's TLS listener naming the agent's `sds-grpc` cluster, the real
 * `mesh-agent proxy router` relays it and serves the credential from `GATEWAY_CREDENTIALS_DIR`, and the
 * stand-in proxy, subscribing to what its listener names as Envoy does, holds the certificate, then the
 * rotated one.
 */
import assert from "node:assert/strict";
import { startOidcIssuer } from "../shared/testing/oidc_issuer.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  freePort,
  type RunningProgram,
  startProgram,
} from "./helpers/programs.ts";
import { startAgentProgram, writeStandInLauncher } from "./helpers/agent_program.ts";

const DAY = 24 * 3_600_000;

async function poll<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}

const GATEWAY = [
  "apiVersion: networking.mesh.io/v1beta1",
  "kind: Gateway",
  "metadata: { name: public, namespace: edge }",
  "spec:",
  "  selector: { app: ingress }",
  "  servers:",
  "  - port: { number: 8443, name: https, protocol: HTTPS }",
  "    hosts: [shop.example.com]",
  "    tls: { mode: MUTUAL, credentialName: shop-cert }",
  "",
].join("\n");

Deno.test("A gateway's agent serves its credentials from GATEWAY_CREDENTIALS_DIR when discovery does not", async () => {
  const issuer = await startOidcIssuer();
  const dir = await Deno.makeTempDir({ prefix: "mesh_gateway_agent_e2e_" });
  const mesh = await makePluggedInCa(30 * DAY);
  await Deno.mkdir(`${dir}/cacerts`);
  await writePluggedInCa(mesh, `${dir}/cacerts`);
  await Deno.mkdir(`${dir}/config`);
  await Deno.writeTextFile(`${dir}/config/gateway.yaml`, GATEWAY);
  const folder = `${dir}/credentials/shop-cert`;
  await Deno.mkdir(folder, { recursive: true });
  const writeCredential = async (ca: typeof mesh) => {
    await Deno.writeTextFile(`${folder}/tls.key`, ca.files["ca-key.pem"]);
    await Deno.writeTextFile(`${folder}/tls.crt`, ca.files["ca-cert.pem"]);
    await Deno.writeTextFile(`${folder}/ca.crt`, ca.files["root-cert.pem"]);
  };
  const first = await makePluggedInCa(DAY);
  await writeCredential(first);
  const addresses = discoveryAddresses();
  const discovery = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", `${dir}/config`, "--log_as_json"]),
    { TOKEN_ISSUER: issuer.url, ROOT_CA_DIR: `${dir}/cacerts`, MESHD_ENABLE_SDS_SERVER: "false" },
  );
  let agent: RunningProgram | undefined;
  try {
    await discovery.waitFor(/"msg":"discovery server started"/);
    for (const sub of ["var/run/secrets/tokens", "var/run/secrets/mesh", "etc/mesh/pod"]) {
      await Deno.mkdir(`${dir}/${sub}`, { recursive: true });
    }
    await Deno.writeTextFile(
      `${dir}/var/run/secrets/tokens/mesh-token`,
      await issuer.serviceAccountToken("edge", "ingress"),
    );
    await Deno.writeTextFile(`${dir}/var/run/secrets/mesh/root-cert.pem`, mesh.files["root-cert.pem"]);
    await Deno.writeTextFile(`${dir}/etc/mesh/pod/labels`, 'app="ingress"\n');
    const standIn = await writeStandInLauncher(dir);
    const adminPort = freePort();
    agent = startAgentProgram(dir, "router", standIn, {
      POD_NAME: "ingress-1",
      POD_NAMESPACE: "edge",
      INSTANCE_IP: "10.9.9.10",
      GATEWAY_CREDENTIALS_DIR: `${dir}/credentials`,
      PROXY_CONFIG: JSON.stringify({
        discoveryAddress: addresses.secureGRPCAddr,
        binaryPath: standIn,
        proxyAdminPort: adminPort,
        statusPort: freePort(),
      }),
    });
    const held = () => fetch(`http://127.0.0.1:${adminPort}/certs`).then((r) => r.json());
    const served = await poll("the gateway's credential over the agent's SDS", async () => {
      const certs = await held();
      return certs["shop-cert"] && certs["shop-cert-cacert"] ? certs : undefined;
    });
    assert.equal(served["shop-cert"], first.files["ca-cert.pem"]);
    assert.equal(served["shop-cert-cacert"], first.files["root-cert.pem"]);
    const second = await makePluggedInCa(DAY);
    await writeCredential(second);
    await poll("the rotated credential", async () => {
      const certs = await held();
      return certs["shop-cert"] === second.files["ca-cert.pem"] ? certs : undefined;
    });
  } finally {
    await agent?.stop();
    await discovery.stop();
    await issuer.close();
    await Deno.remove(dir, { recursive: true });
  }
});
