import assert from "node:assert/strict";
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
    let server: ReturnType<typeof startProgram> | undefined;
    const client = await (async () => {
      await opensslServingCert(dir);
      return Deno.createHttpClient({ caCerts: [await Deno.readTextFile(`${dir}/ca.crt`)] });
    })();
    try {
      server = startProgram(
        "mesh-discovery",
        discoveryArgs(discoveryAddresses({ httpsAddr: `127.0.0.1:${port}` }), [
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
