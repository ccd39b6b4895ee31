import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { silentLogger } from "@mesh/shared/log/logger";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "../config/_test_support.ts";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { OrchSecretStore } from "./orch_secret_store.ts";
import { makePluggedInCa } from "@mesh/shared/testing/plugged_in_ca";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";

const b64 = (text: string) => Buffer.from(text).toString("base64");
const DAY = 24 * 3_600_000;
const first = await makePluggedInCa(DAY);
const second = await makePluggedInCa(DAY);
const CHAIN = first.files["ca-cert.pem"], KEY = first.files["ca-key.pem"], CA = first.files["root-cert.pem"];
const CHAIN2 = second.files["ca-cert.pem"], KEY2 = second.files["ca-key.pem"];

/** A secret store reading `api` through a kubeconfig in a temp dir (the caller removes `dir`). */
async function storeOn(api: OrchApiServer): Promise<{ dir: string; store: OrchSecretStore }> {
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_secrets_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const store = new OrchSecretStore({
    kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    limiter: new RateLimiter(1000, 100),
    log: silentLogger,
    retryMs: 50,
  });
  return { dir, store };
}

Deno.test("Secrets holding a certificate and key become gateway credentials; changes are announced", async () => {
  const api = OrchApiServer.start();
  const { dir, store } = await storeOn(api);
  const changes: string[] = [];
  store.onChange((ns, name) => changes.push(`${ns}/${name}`));
  try {
    api.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "shop-cert", namespace: "shop" },
      data: { "tls.crt": b64(CHAIN), "tls.key": b64(KEY), "ca.crt": b64(CA) },
    });
    api.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "token", namespace: "shop" },
      data: { t: b64("x") },
    });
    store.start();
    await waitFor(() => store.get("shop", "shop-cert") !== undefined, "the credential");
    assert.deepEqual(store.get("shop", "shop-cert"), {
      certChainPem: CHAIN,
      privateKeyPem: KEY,
      caCertPem: CA,
    });
    assert.equal(store.get("shop", "token"), undefined, "not a credential");
    api.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "shop-cert", namespace: "shop" },
      data: { cert: b64(CHAIN2), key: b64(KEY2) },
    });
    await waitFor(() => store.get("shop", "shop-cert")?.certChainPem === CHAIN2, "the update");
    api.delete("v1", "Secret", "shop", "shop-cert");
    await waitFor(() => store.get("shop", "shop-cert") === undefined, "the deletion");
    assert.ok(changes.filter((c) => c === "shop/shop-cert").length >= 3);
    assert.ok(!changes.includes("shop/token"));
  } finally {
    await store.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("A Secret whose certificate or key is not PEM is refused alone, reported once, and the last good one kept", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_orch_secrets_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
  const log = new RecordingLogger();
  const problems: string[] = [];
  const store = new OrchSecretStore({
    kubeConfig: loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    limiter: new RateLimiter(1000, 100),
    log,
    retryMs: 50,
    onProblem: (key) => problems.push(key),
  });
  const secret = (name: string, crt: string) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "shop" },
    data: { "tls.crt": b64(crt), "tls.key": b64(KEY) },
  });
  try {
    api.apply(secret("good", CHAIN));
    api.apply(secret("bad", "not a certificate"));
    store.start();
    await waitFor(() => store.get("shop", "good") !== undefined, "the good credential");
    await waitFor(() => problems.length === 1, "the bad one reported");
    assert.equal(store.get("shop", "bad"), undefined);
    api.apply(secret("good", CHAIN.slice(0, 80)));
    await waitFor(() => problems.length === 2, "the broken edit reported");
    assert.equal(store.get("shop", "good")?.certChainPem, CHAIN, "the last good version stays");
    assert.deepEqual(problems, ["shop/bad", "shop/good"]);
    assert.match(log.lines.find((l) => l.level === "warn")?.msg ?? "", /Secret shop\/bad: certificate chain/);
  } finally {
    await store.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Secrets of the wrong shape stop neither the list nor the other credentials", async () => {
  // Before: a list item whose ownerReferences was a map failed the typed client's list ("data is not
  // iterable"), so no credential was ever listed; a data value that is not a string threw in decoding.
  const api = OrchApiServer.start();
  const { dir, store } = await storeOn(api);
  try {
    api.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "owned", namespace: "shop", ownerReferences: { a: { name: "x" } } },
      data: { "tls.crt": 5, "tls.key": b64(KEY) },
    });
    api.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "shop-cert", namespace: "shop" },
      data: { "tls.crt": b64(CHAIN), "tls.key": b64(KEY) },
    });
    store.start();
    await waitFor(() => store.get("shop", "shop-cert") !== undefined, "the good credential listed");
    assert.equal(store.get("shop", "shop-cert")?.certChainPem, CHAIN);
    assert.equal(store.get("shop", "owned"), undefined, "a certificate that is not a string is none");
  } finally {
    await store.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
