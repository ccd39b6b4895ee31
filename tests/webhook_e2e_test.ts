import assert from "node:assert/strict";
import { waitFor } from "../shared/testing/wait_for.ts";
import { discoveryAddresses, discoveryArgs, freePort, startProgram } from "./helpers/programs.ts";
import { needs, OPENSSL } from "../shared/testing/system_tools.ts";
import { opensslOk } from "../shared/testing/openssl.ts";

/** Makes a CA and a serving certificate for 127.0.0.1 with the real openssl. */
async function opensslServingCert(dir: string): Promise<void> {
  const at = (file: string) => `${dir}/${file}`;
  await opensslOk([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.crt"),
    "-subj",
    "/CN=test-ca",
    "-days",
    "1",
  ]);
  await opensslOk([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    at("tls.key"),
    "-out",
    at("tls.csr"),
    "-subj",
    "/CN=meshd",
  ]);
  await Deno.writeTextFile(at("ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await opensslOk([
    "x509",
    "-req",
    "-in",
    at("tls.csr"),
    "-CA",
    at("ca.crt"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("tls.crt"),
    "-days",
    "1",
    "-extfile",
    at("ext.cnf"),
  ]);
}

function review(object: unknown, apiVersion = "admission.k8s.io/v1") {
  return JSON.stringify({
    apiVersion,
    kind: "AdmissionReview",
    request: { uid: "e2e-uid-1", operation: "CREATE", object },
  });
}

const badVirtualService = {
  apiVersion: "networking.istio.io/v1alpha3",
  kind: "VirtualService",
  metadata: { name: "reviews", namespace: "bookinfo" },
  spec: {
    hosts: ["reviews"],
    http: [{
      route: [{ destination: { host: "reviews", subset: "v1" }, weight: 60 }, {
        destination: { host: "reviews" },
        weight: 30,
      }],
    }],
  },
};

Deno.test(
  "mesh-discovery serves the validation webhook over TLS with the given certificate",
  needs(OPENSSL),
  async (t) => {
    const dir = await Deno.makeTempDir();
    const port = freePort();
    const addresses = discoveryAddresses({ httpsAddr: `127.0.0.1:${port}` });
    let server: ReturnType<typeof startProgram> | undefined;
    const client = await (async () => {
      await opensslServingCert(dir);
      return Deno.createHttpClient({ caCerts: [await Deno.readTextFile(`${dir}/ca.crt`)] });
    })();
    try {
      server = startProgram(
        "mesh-discovery",
        discoveryArgs(addresses, [
          "--registries",
          "Mock",
          "--configDir",
          "examples/config",
          "--log_as_json",
          "--tlsCertFile",
          `${dir}/tls.crt`,
          "--tlsKeyFile",
          `${dir}/tls.key`,
        ]),
      );
      await server.waitFor(/"msg":"webhook server listening"/);
      const base = `https://127.0.0.1:${port}`;
      await t.step("/httpsReady answers 200", async () => {
        const res = await fetch(`${base}/httpsReady`, { client });
        await res.body?.cancel();
        assert.equal(res.status, 200);
      });
      await t.step("an invalid VirtualService is denied with every error, uid echoed", async () => {
        const res = await fetch(`${base}/validate`, {
          client,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: review(badVirtualService),
        });
        const body = await res.json();
        assert.equal(body.apiVersion, "admission.k8s.io/v1");
        assert.equal(body.response.uid, "e2e-uid-1");
        assert.equal(body.response.allowed, false);
        assert.match(body.response.status.message, /VirtualService bookinfo\/reviews/);
        assert.match(body.response.status.message, /spec\.http\[0\]\.route.*weight/);
      });
      await t.step(
        "renewed certificate files are served to new connections, on 15017 and 15012",
        async () => {
          const renewedDir = `${dir}/renewed`;
          await Deno.mkdir(renewedDir);
          await opensslServingCert(renewedDir);
          const renewedCa = await Deno.readTextFile(`${renewedDir}/ca.crt`);
          const handshakes = async (address: string) => {
            const [hostname, port] = [
              address.slice(0, address.lastIndexOf(":")),
              address.slice(address.lastIndexOf(":") + 1),
            ];
            try {
              const conn = await Deno.connectTls({
                hostname,
                port: Number(port),
                caCerts: [renewedCa],
                alpnProtocols: ["h2"],
              });
              try {
                await conn.handshake();
                return true;
              } finally {
                conn.close();
              }
            } catch {
              return false;
            }
          };
          const webhookAddress = `127.0.0.1:${port}`;
          assert.equal(
            await handshakes(webhookAddress),
            false,
            "the renewed CA does not verify the first certificate",
          );
          for (const file of ["tls.key", "tls.crt"]) {
            await Deno.rename(`${renewedDir}/${file}`, `${dir}/${file}`);
          }
          await waitFor(
            () => handshakes(webhookAddress),
            "the webhook port to serve the renewed certificate",
          );
          await waitFor(() => handshakes(addresses.secureGRPCAddr), "the secure xDS port to serve it");
        },
      );
      await t.step("a non-JSON content type is 415", async () => {
        const res = await fetch(`${base}/admitpilot`, {
          client,
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: "x",
        });
        await res.body?.cancel();
        assert.equal(res.status, 415);
      });
    } finally {
      await server?.stop();
      client.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
