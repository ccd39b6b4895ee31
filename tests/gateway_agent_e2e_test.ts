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
import { poll } from "./helpers/poll.ts";
import { MUTUAL_GATEWAY_YAML, writeCredentialFolder } from "./helpers/gateway_fixture.ts";

const DAY = 24 * 3_600_000;

Deno.test("A gateway's agent serves its credentials from GATEWAY_CREDENTIALS_DIR when discovery does not", async () => {
  const issuer = await startOidcIssuer();
  const dir = await Deno.makeTempDir({ prefix: "mesh_gateway_agent_e2e_" });
  const mesh = await makePluggedInCa(30 * DAY);
  await Deno.mkdir(`${dir}/cacerts`);
  await writePluggedInCa(mesh, `${dir}/cacerts`);
  await Deno.mkdir(`${dir}/config`);
  await Deno.writeTextFile(`${dir}/config/gateway.yaml`, MUTUAL_GATEWAY_YAML);
  const folder = `${dir}/credentials/shop-cert`;
  const first = await makePluggedInCa(DAY);
  await writeCredentialFolder(folder, first);
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
    await writeCredentialFolder(folder, second);
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
