import assert from "node:assert/strict";
import { Router } from "@mesh/shared/http/router";
import { createSelfSignedCa } from "@mesh/shared/pki/certificate_authority";
import { certificatesToPem } from "@mesh/shared/pki/certificate_pem";
import { issueCertificate } from "@mesh/shared/pki/issue_certificate";
import { generateKeyPair } from "@mesh/shared/pki/key_pair";
import { exportPrivateKeyPem } from "@mesh/shared/pki/private_key_pem";
import { selfSignedServingCert } from "@mesh/shared/pki/serving_certificate";
import { ServingTlsError } from "./serving_tls.ts";
import { startWebhookServer, type WebhookServerOptions } from "./webhook_server.ts";
import { openssl } from "@mesh/shared/testing/openssl";
import { needs, OPENSSL } from "@mesh/shared/testing/system_tools";
import {
  admissionReview,
  counterValue,
  INVALID_SPEC,
  INVALID_SPEC_ERROR_PATHS,
  testMetrics,
  VALID_SPEC,
  virtualService,
} from "./_test_support.ts";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { waitFor } from "@mesh/shared/testing/wait_for";

/** Starts a server on a free loopback port, runs `fn` with a client that trusts `caPem`, and cleans up. */
async function withServer(
  options: Partial<WebhookServerOptions>,
  fn: (ctx: {
    url: string;
    post: (path: string, body: string, contentType?: string) => Promise<Response>;
    get: (path: string) => Promise<Response>;
    caPem: string;
    port: number;
  }) => Promise<void>,
  trustedCaPem?: string,
): Promise<void> {
  const webhook = await startWebhookServer({
    addr: "127.0.0.1:0",
    metrics: testMetrics(),
    log: new RecordingLogger(),
    validationEnabled: true,
    ...options,
  });
  const caPem = trustedCaPem ?? webhook.tls.caPem!;
  const client = Deno.createHttpClient({ caCerts: [caPem] });
  try {
    await fn({
      url: webhook.url,
      caPem,
      port: webhook.server.address.port,
      post: (path, body, contentType = "application/json") =>
        fetch(`${webhook.url}${path}`, {
          method: "POST",
          body,
          headers: { "content-type": contentType },
          client,
        }),
      get: (path) => fetch(`${webhook.url}${path}`, { client }),
    });
  } finally {
    client.close();
    await webhook.shutdown();
  }
}

Deno.test("Webhook server validates AdmissionReviews over TLS with a self-signed certificate", async (t) => {
  const metrics = testMetrics();
  await withServer({ metrics }, async ({ url, post, get, caPem, port }) => {
    const review = async (
      object: unknown,
      options: Parameters<typeof admissionReview>[1] = {},
      path = "/validate",
    ) => {
      const response = await post(path, JSON.stringify(admissionReview(object, options)));
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /application\/json/);
      return await response.json();
    };

    await t.step("/httpsReady answers 200", async () => {
      const response = await get("/httpsReady");
      await response.body?.cancel();
      assert.equal(response.status, 200);
    });
    await t.step("a valid VirtualService is allowed, answered in v1 with the request's uid", async () => {
      const body = await review(virtualService(VALID_SPEC), { uid: "uid-v1" });
      assert.deepEqual(body, {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid: "uid-v1", allowed: true },
      });
    });
    await t.step("a v1beta1 review is answered in v1beta1", async () => {
      const body = await review(virtualService(VALID_SPEC), {
        apiVersion: "admission.k8s.io/v1beta1",
        uid: "uid-b1",
      });
      assert.deepEqual(body, {
        apiVersion: "admission.k8s.io/v1beta1",
        kind: "AdmissionReview",
        response: { uid: "uid-b1", allowed: true },
      });
    });
    await t.step(
      "an invalid VirtualService is denied with every error, on /validate and /admitpilot",
      async () => {
        for (const path of ["/validate", "/admitpilot"]) {
          const body = await review(virtualService(INVALID_SPEC), { uid: `uid${path}` }, path);
          assert.equal(body.response.uid, `uid${path}`);
          assert.equal(body.response.allowed, false);
          const message: string = body.response.status.message;
          assert.match(message, /^VirtualService bookinfo\/reviews is invalid \(4 errors\)/);
          for (const errorPath of INVALID_SPEC_ERROR_PATHS) {
            assert.ok(message.includes(`${errorPath}: `), errorPath);
          }
        }
      },
    );
    await t.step("warnings of an admitted resource are in response.warnings", async () => {
      const spec = {
        hosts: ["reviews"],
        http: [{
          route: [{ destination: { host: "reviews" } }],
          mirror: { host: "shadow" },
          mirrorPercent: 50,
        }],
      };
      const body = await review(virtualService(spec));
      assert.equal(body.response.allowed, true);
      assert.deepEqual(body.response.warnings, [
        "spec.http[0].mirrorPercent: mirrorPercent is deprecated; use mirrorPercentage",
      ]);
    });
    await t.step("an unknown top-level field is denied", async () => {
      const body = await review(virtualService(VALID_SPEC, { extraField: true }));
      assert.equal(body.response.allowed, false);
      assert.match(body.response.status.message, /extraField: unknown field "extraField"/);
    });
    await t.step("DELETE is allowed without checking", async () => {
      const body = await review(virtualService(INVALID_SPEC), { operation: "DELETE" });
      assert.deepEqual(body.response, { uid: "705ab4f5-6393-11e8-b7cc-42010a800002", allowed: true });
    });
    await t.step("a kind the mesh does not know in a mesh group is denied", async () => {
      const body = await review({
        apiVersion: "security.istio.io/v1beta1",
        kind: "Quota",
        metadata: { name: "q" },
      });
      assert.equal(body.response.allowed, false);
      assert.match(
        body.response.status.message,
        /unrecognized kind "Quota" in API group "security.istio.io"/,
      );
    });
    await t.step("a kind of a group the mesh does not serve is denied (fail closed)", async () => {
      const body = await review({
        apiVersion: "evil.io/v1",
        kind: "Gizmo",
        metadata: { name: "d" },
        spec: 1,
      });
      assert.equal(body.response.allowed, false);
      assert.match(body.response.status.message, /API group "evil.io" is not served by the mesh/);
    });
    await t.step("an empty body is 400", async () => {
      const response = await post("/validate", "");
      assert.equal(response.status, 400);
      assert.match((await response.json()).error, /No body found/);
    });
    await t.step("a text/plain body is 415", async () => {
      const response = await post("/validate", JSON.stringify(admissionReview({})), "text/plain");
      assert.equal(response.status, 415);
      assert.equal((await response.json()).error, "Unsupported content type: expected application/json");
    });
    await t.step("a body over 3 MiB is 413, and the reply does not carry it back", async () => {
      const response = await post("/validate", `{"x":"${"a".repeat(3 * 1024 * 1024)}"}`);
      const text = await response.text();
      assert.equal(response.status, 413);
      assert.ok(text.length < 200, text.slice(0, 200));
    });
    await t.step("a declared 100 MB body is refused before it is sent", async () => {
      const conn = await Deno.connectTls({ hostname: "127.0.0.1", port, caCerts: [caPem] });
      try {
        await conn.write(new TextEncoder().encode(
          "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
            "Content-Length: 100000000\r\n\r\n",
        ));
        const buf = new Uint8Array(4096);
        const n = await conn.read(buf);
        assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1.1 413 /);
      } finally {
        conn.close();
      }
    });
    await t.step("a wrong content type is refused before the body is read", async () => {
      const conn = await Deno.connectTls({ hostname: "127.0.0.1", port, caCerts: [caPem] });
      try {
        await conn.write(new TextEncoder().encode(
          "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n",
        ));
        const buf = new Uint8Array(4096);
        const n = await conn.read(buf);
        assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1.1 415 /);
      } finally {
        conn.close();
      }
    });
    await t.step("invalid JSON is 400", async () => {
      const response = await post("/validate", "{not json");
      assert.equal(response.status, 400);
      const { error } = await response.json();
      assert.match(error, /^Cannot decode body as JSON: /);
      assert.ok(!error.includes("not json"), "the reply does not quote the input");
    });
    await t.step("JSON that is not an AdmissionReview is 400", async () => {
      const response = await post("/validate", JSON.stringify(virtualService(VALID_SPEC)));
      assert.equal(response.status, 400);
      assert.match(
        (await response.json()).error,
        /Unsupported AdmissionReview apiVersion "networking.istio.io/,
      );
    });
    await t.step("GET on /validate is 405", async () => {
      const response = await get("/validate");
      await response.body?.cancel();
      assert.equal(response.status, 405);
    });
    await t.step("every outcome was counted", async () => {
      const vs = { group: "networking.istio.io", version: "v1beta1", resource: "virtualservices" };
      assert.equal(await counterValue(metrics, "config_validation_passed", vs), 3);
      assert.equal(
        await counterValue(metrics, "config_validation_failed", { ...vs, reason: "invalid_config" }),
        3,
      );
      assert.equal(
        await counterValue(metrics, "config_validation_failed", { ...vs, reason: "unsupported_operation" }),
        1,
      );
      assert.equal(await counterValue(metrics, "config_validation_failed", { reason: "unknown_type" }), 2);
      assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "400" }), 3);
      assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "415" }), 2);
      assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "413" }), 2);
      assert.match(await metrics.render(), /config_validation_http_error\{status="415"\} 2/);
    });
    await t.step("the certificate also verifies for localhost", async () => {
      const client = Deno.createHttpClient({ caCerts: [caPem] });
      try {
        const response = await fetch(url.replace("127.0.0.1", "localhost"), { client });
        await response.body?.cancel();
        assert.equal(response.status, 404);
      } finally {
        client.close();
      }
    });
    await t.step("a client that does not trust the CA refuses the connection", async () => {
      const other = await createSelfSignedCa({ org: "other", ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
      const client = Deno.createHttpClient({ caCerts: [other.certificatePem] });
      try {
        await assert.rejects(fetch(`${url}/httpsReady`, { client }), TypeError);
      } finally {
        client.close();
      }
    });
    await t.step({
      name: "openssl s_client verifies the served chain and host name",
      ...needs(OPENSSL),
      fn: async () => {
        const dir = await Deno.makeTempDir({ prefix: "mesh-webhook-test-" });
        try {
          await Deno.writeTextFile(`${dir}/ca.pem`, caPem);
          const args = [
            "s_client",
            "-connect",
            `127.0.0.1:${port}`,
            "-CAfile",
            `${dir}/ca.pem`,
            "-verify_return_error",
          ];
          const ok = await openssl([
            ...args,
            "-servername",
            "meshd.mesh-system.svc",
            "-verify_hostname",
            "meshd.mesh-system.svc",
          ]);
          assert.equal(ok.code, 0, ok.stdout + ok.stderr);
          assert.match(ok.stdout + ok.stderr, /Verify return code: 0 \(ok\)/);
          const wrongHost = await openssl([...args, "-verify_hostname", "evil.example"]);
          assert.notEqual(wrongHost.code, 0);
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      },
    });
  });
});

Deno.test("Webhook server with VALIDATION_ENABLED=false serves readiness only", async (t) => {
  await withServer({ validationEnabled: false }, async ({ post, get }) => {
    for (const path of ["/validate", "/admitpilot"]) {
      await t.step(`${path} is 404`, async () => {
        const response = await post(path, JSON.stringify(admissionReview(virtualService(INVALID_SPEC))));
        await response.body?.cancel();
        assert.equal(response.status, 404);
      });
    }
    await t.step("/httpsReady is 200", async () => {
      const response = await get("/httpsReady");
      await response.body?.cancel();
      assert.equal(response.status, 200);
    });
  });
});

Deno.test("Webhook server serves routes registered by the caller, such as the injection webhook", async () => {
  const router = new Router().add("/inject", "test", () => new Response("injected"), ["POST"]);
  await withServer({ router }, async ({ post }) => {
    const response = await post("/inject", "{}");
    assert.equal(await response.text(), "injected");
    const validate = await post("/validate", JSON.stringify(admissionReview(virtualService(VALID_SPEC))));
    assert.equal((await validate.json()).response.allowed, true);
  });
});

Deno.test("Webhook server serves --tlsCertFile/--tlsKeyFile", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "mesh-webhook-test-" });
  try {
    const ca = await createSelfSignedCa({ org: "cluster.local", ttlMs: 3_600_000 });
    const keys = await generateKeyPair();
    const leaf = await issueCertificate(ca, {
      dnsNames: ["localhost"],
      ipAddresses: ["127.0.0.1"],
      publicKey: keys.publicKey,
      ttlMs: 3_600_000,
      usages: ["server"],
    });
    const certFile = `${dir}/cert-chain.pem`;
    const keyFile = `${dir}/key.pem`;
    await Deno.writeTextFile(certFile, certificatesToPem([leaf]));
    await Deno.writeTextFile(keyFile, await exportPrivateKeyPem(keys.privateKey));

    await t.step("the files' certificate is served and verifies against their CA", async () => {
      const log = new RecordingLogger();
      await withServer({ tlsCertFile: certFile, tlsKeyFile: keyFile, log }, async ({ post, get }) => {
        const ready = await get("/httpsReady");
        await ready.body?.cancel();
        assert.equal(ready.status, 200);
        const body =
          await (await post("/validate", JSON.stringify(admissionReview(virtualService(INVALID_SPEC)))))
            .json();
        assert.equal(body.response.allowed, false);
      }, ca.certificatePem);
      assert.ok(log.lines.some((l) => l.msg === "Serving the certificate from --tlsCertFile"));
    });

    await t.step("a renewal of the files is served to new connections without a restart", async () => {
      const webhook = await startWebhookServer({
        addr: "127.0.0.1:0",
        metrics: testMetrics(),
        log: new RecordingLogger(),
        validationEnabled: true,
        tlsCertFile: certFile,
        tlsKeyFile: keyFile,
      });
      const renewed = await selfSignedServingCert(["localhost", "127.0.0.1"]);
      const trustingRenewed = Deno.createHttpClient({ caCerts: [renewed.caPem] });
      const answers = async () => {
        try {
          const response = await fetch(`${webhook.url}/httpsReady`, { client: trustingRenewed });
          await response.body?.cancel();
          return response.status === 200;
        } catch {
          return false;
        }
      };
      try {
        assert.equal(await answers(), false, "the renewed CA does not verify the first certificate");
        await Deno.writeTextFile(`${keyFile}.tmp`, renewed.keyPem);
        await Deno.rename(`${keyFile}.tmp`, keyFile);
        await Deno.writeTextFile(`${certFile}.tmp`, renewed.certPem);
        await Deno.rename(`${certFile}.tmp`, certFile);
        await waitFor(answers, "the renewed certificate to be served");
        assert.equal(webhook.tls.cert, renewed.certPem);
      } finally {
        trustingRenewed.close();
        await webhook.shutdown();
      }
    });

    const fail = (options: Partial<WebhookServerOptions>, message: RegExp) =>
      assert.rejects(
        startWebhookServer({
          addr: "127.0.0.1:0",
          metrics: testMetrics(),
          log: new RecordingLogger(),
          validationEnabled: true,
          ...options,
        }),
        (error: unknown) => {
          assert.ok(error instanceof ServingTlsError, String(error));
          assert.match(error.message, message);
          return true;
        },
      );
    await t.step("only one of the two flags", async () => {
      await fail(
        { tlsCertFile: certFile },
        /^--tlsCertFile is set but --tlsKeyFile is not: give both or neither$/,
      );
      await fail({ tlsKeyFile: keyFile }, /^--tlsKeyFile is set but --tlsCertFile is not/);
    });
    await t.step("a file that cannot be read", async () => {
      await fail(
        { tlsCertFile: `${dir}/missing.pem`, tlsKeyFile: keyFile },
        new RegExp(`^Cannot read --tlsCertFile "${dir}/missing.pem": `),
      );
    });
    await t.step("a certificate file without a certificate", async () => {
      await fail(
        { tlsCertFile: keyFile, tlsKeyFile: keyFile },
        /"CERTIFICATE" PEM block in --tlsCertFile ".*key.pem"/,
      );
    });
    await t.step("a key that is not the certificate's", async () => {
      const otherKey = `${dir}/other-key.pem`;
      await Deno.writeTextFile(otherKey, await exportPrivateKeyPem((await generateKeyPair()).privateKey));
      await fail(
        { tlsCertFile: certFile, tlsKeyFile: otherKey },
        /^--tlsKeyFile ".*other-key.pem" does not hold the private key of the certificate in --tlsCertFile/,
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
