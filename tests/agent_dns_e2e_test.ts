/**
 * DNS capture end to end: the real `mesh-discovery` generates the sidecar's name table from the ServiceEntries
 * of its config directory, the real `mesh-agent proxy sidecar` (with `MESH_META_DNS_CAPTURE`) subscribes to it
 * on the upstream stream of its xDS proxy and answers DNS from it, forwarding any other name to the resolver
 * of its resolv.conf (a fake one the test plays). A changed ServiceEntry address is answered after the push.
 */
import assert from "node:assert/strict";
import { startOidcIssuer } from "../shared/testing/oidc_issuer.ts";
import { makePluggedInCa, writePluggedInCa } from "../shared/testing/plugged_in_ca.ts";
import { DNS_RCODE, DNS_TYPE, rcodeOf } from "../agent/dns/dns_message.ts";
import {
  addressesOf,
  dnsQuery,
  DnsTestClient,
  fakeUpstream,
  UPSTREAM_ANSWER,
} from "../agent/dns/_test_dns.ts";
import {
  discoveryAddresses,
  discoveryArgs,
  freePort,
  type RunningProgram,
  startProgram,
} from "./helpers/programs.ts";
import { startAgentProgram, writeStandInLauncher } from "./helpers/agent_program.ts";
import { poll } from "./helpers/poll.ts";

const DAY = 24 * 3_600_000;

function serviceEntries(dbAddress: string): string {
  return [
    "apiVersion: networking.mesh.io/v1beta1",
    "kind: ServiceEntry",
    "metadata: { name: db, namespace: example }",
    "spec:",
    "  hosts: [db.example.com]",
    `  addresses: [${dbAddress}]`,
    "  location: MESH_EXTERNAL",
    "  resolution: STATIC",
    "  ports: [{ number: 5432, name: tcp, protocol: TCP }]",
    "  endpoints: [{ address: 10.30.0.1 }]",
    "---",
    "apiVersion: networking.mesh.io/v1beta1",
    "kind: ServiceEntry",
    "metadata: { name: api, namespace: example }",
    "spec:",
    "  hosts: [api.example.com]",
    "  location: MESH_EXTERNAL",
    "  resolution: DNS",
    "  ports: [{ number: 443, name: tls, protocol: TLS }]",
    "",
  ].join("\n");
}

Deno.test("mesh-agent answers DNS for ServiceEntry hosts from the name table and forwards other names", async (t) => {
  const issuer = await startOidcIssuer();
  const upstream = await fakeUpstream();
  const dir = await Deno.makeTempDir({ prefix: "mesh_agent_dns_e2e_" });
  const mesh = await makePluggedInCa(30 * DAY);
  await Deno.mkdir(`${dir}/cacerts`);
  await writePluggedInCa(mesh, `${dir}/cacerts`);
  await Deno.mkdir(`${dir}/config`);
  await Deno.writeTextFile(`${dir}/config/entries.yaml`, serviceEntries("10.20.0.1"));
  await Deno.writeTextFile(
    `${dir}/resolv.conf`,
    `nameserver ${upstream.address}\nsearch example.svc.cluster.local svc.cluster.local cluster.local\n`,
  );
  const addresses = discoveryAddresses();
  const discovery = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", `${dir}/config`, "--log_as_json"]),
    { TOKEN_ISSUER: issuer.url, ROOT_CA_DIR: `${dir}/cacerts` },
  );
  let agent: RunningProgram | undefined;
  const client = new DnsTestClient();
  try {
    await discovery.waitFor(/"msg":"discovery server started"/);
    for (const sub of ["var/run/secrets/tokens", "var/run/secrets/mesh"]) {
      await Deno.mkdir(`${dir}/${sub}`, { recursive: true });
    }
    await Deno.writeTextFile(
      `${dir}/var/run/secrets/tokens/mesh-token`,
      await issuer.serviceAccountToken("example", "app"),
    );
    await Deno.writeTextFile(`${dir}/var/run/secrets/mesh/root-cert.pem`, mesh.files["root-cert.pem"]);
    const standIn = await writeStandInLauncher(dir);
    const dnsPort = freePort();
    const statusPort = freePort();
    agent = startAgentProgram(dir, "sidecar", standIn, {
      POD_NAME: "app-1",
      POD_NAMESPACE: "example",
      INSTANCE_IP: "10.9.9.9",
      MESH_META_DNS_CAPTURE: "true",
      MESH_META_DNS_AUTO_ALLOCATE: "true",
      MESH_DNS_PROXY_PORT: String(dnsPort),
      MESH_DNS_RESOLV_CONF: `${dir}/resolv.conf`,
      PROXY_CONFIG: JSON.stringify({
        discoveryAddress: addresses.secureGRPCAddr,
        binaryPath: standIn,
        proxyAdminPort: freePort(),
        statusPort,
      }),
    });
    const answer = async (name: string, type: number = DNS_TYPE.A) => {
      const reply = await client.ask(
        dnsQuery(name, Math.floor(Math.random() * 65_536), type),
        dnsPort,
        "127.0.0.1",
        2_000,
      );
      return rcodeOf(reply.flags) === DNS_RCODE.noError ? addressesOf(reply) : undefined;
    };
    const answered = (name: string, expected: (found: unknown[]) => boolean) =>
      poll(`an answer for ${name}`, async () => {
        const found = await answer(name);
        return found !== undefined && expected(found) ? found : undefined;
      }, 45_000).catch((error) => {
        throw new Error(`${error.message}\nagent said:\n${agent!.stdout}${agent!.stderr}`);
      });

    await t.step("a ServiceEntry host is answered with its address from the name table", async () => {
      assert.deepEqual(await answered("db.example.com.", (f) => f.length > 0), ["10.20.0.1"]);
      // What the resolver tries first under the workload's search path: a CNAME to the host.
      assert.deepEqual(await answer("db.example.com.example.svc.cluster.local."), ["10.20.0.1"]);
    });
    await t.step("a ServiceEntry without an address is answered with an auto-allocated one", async () => {
      const [address] = (await answer("api.example.com.")) ?? [];
      assert.match(String(address), /^240\.240\.\d+\.\d+$/);
    });
    await t.step("a name outside the mesh goes to the resolv.conf resolver", async () => {
      assert.deepEqual(await answer("www.outside.test."), [UPSTREAM_ANSWER]);
      assert.ok(upstream.seen.includes("www.outside.test."));
      assert.ok(!upstream.seen.includes("db.example.com."), "mesh hosts never go upstream");
    });
    await t.step("a changed ServiceEntry address is answered after the push", async () => {
      await Deno.writeTextFile(`${dir}/config/entries.yaml`, serviceEntries("10.20.0.2"));
      await answered("db.example.com.", (f) => f[0] === "10.20.0.2");
    });
    await t.step("the agent's metrics count the queries", async () => {
      const text = await (await fetch(`http://127.0.0.1:${statusPort}/stats/prometheus`)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
      assert.ok(value("dns_requests_total") >= 5, text.slice(0, 2000));
      assert.ok(value("dns_upstream_requests_total") >= 1);
    });
  } finally {
    client.close();
    await agent?.stop();
    await discovery.stop();
    upstream.close();
    await issuer.close();
    await Deno.remove(dir, { recursive: true });
  }
});
