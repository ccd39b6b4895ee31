import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { encodeMessage } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { type CredentialSource, SDS_SERVICE_DEFINITION, startSdsServer } from "./sds_server.ts";
import type { TlsCredential } from "@mesh/shared/credentials/tls_credential";
import { FixedSecret, SECRET } from "./_sds_test_support.ts";
import FakeTimers from "@sinonjs/fake-timers";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { timersOf } from "@mesh/shared/testing/fake_timers";

const schema = loadEnvoySchema();
const Response = schema.lookupType("envoy.service.discovery.v3.DiscoveryResponse");
const request = (fields: Record<string, unknown>) =>
  Buffer.from(encodeMessage("type.googleapis.com/envoy.service.discovery.v3.DiscoveryRequest", fields));

async function value(metrics: Metrics, kind: "counter" | "gauge", name: string): Promise<number> {
  const { values } = await metrics[kind](name).get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

Deno.test("SDS counts pushes, rejections and connections, and closes streams that never acknowledge", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sds_server_" });
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const secrets = new FixedSecret();
  const clock = FakeTimers.createClock();
  const server = await startSdsServer({
    socket: `${dir}/SDS`,
    secrets,
    log: silentLogger,
    metrics,
    staleRecycleMs: 300,
    timers: timersOf(clock),
  });
  const Client = grpc.makeClientConstructor(SDS_SERVICE_DEFINITION, "SDS");
  const client = new Client(`unix://${dir}/SDS`, grpc.credentials.createInsecure());
  try {
    // deno-lint-ignore no-explicit-any
    const call: grpc.ClientDuplexStream<Buffer, Buffer> = (client as any).StreamSecrets();
    const responses: { version_info: string; nonce: string }[] = [];
    const ended = new Promise<void>((resolve) => {
      call.on("end", resolve);
      call.on("error", () => resolve());
    });
    call.on("data", (bytes: Buffer) => responses.push(Response.decode(bytes) as never));
    call.write(request({ type_url: TYPE_URL.secret, resource_names: ["default"] }));
    const until = (what: string, predicate: () => boolean | Promise<boolean>) =>
      waitFor(predicate, what, 5_000, 20);
    await until("the first push", () => responses.length === 1);
    assert.equal(await value(metrics, "counter", "total_pushes"), 1);
    assert.equal(await value(metrics, "gauge", "total_active_connections"), 1);

    // The proxy rejects it: counted per secret name.
    call.write(request({
      type_url: TYPE_URL.secret,
      resource_names: ["default"],
      version_info: "",
      response_nonce: responses[0].nonce,
      error_detail: { code: 3, message: "bad key" },
    }));
    await until(
      "the rejection counted",
      async () => await value(metrics, "counter", "total_secret_update_failures") === 1,
    );

    // Never acknowledged: at the next recycling pass the stream is closed as stale and counted.
    clock.tick(299);
    assert.equal(await value(metrics, "counter", "total_stale_connections"), 0, "not before the interval");
    clock.tick(1);
    await ended;
    assert.equal(await value(metrics, "counter", "total_stale_connections"), 1);
    await until(
      "the connection gone",
      async () => await value(metrics, "gauge", "total_active_connections") === 0,
    );
  } finally {
    client.close();
    await server.close(10);
    await Deno.remove(dir, { recursive: true });
  }
});

/** The next response on `call`; rejects when the stream ends first. */
function nextResponse(
  call: grpc.ClientDuplexStream<Buffer, Buffer>,
): Promise<{ version_info: string; nonce: string }> {
  return new Promise((resolve, reject) => {
    call.once("data", (bytes: Buffer) => resolve(Response.decode(bytes) as never));
    call.once("end", () => reject(new Error("The SDS stream ended before a response")));
    call.once("error", (error: Error) => reject(error));
  });
}

Deno.test("SDS keeps a stream that acknowledged its secret when it recycles the stale ones", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sds_server_" });
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const clock = FakeTimers.createClock();
  const server = await startSdsServer({
    socket: `${dir}/SDS`,
    secrets: new FixedSecret(),
    log: silentLogger,
    metrics,
    staleRecycleMs: 100,
    timers: timersOf(clock),
  });
  const Client = grpc.makeClientConstructor(SDS_SERVICE_DEFINITION, "SDS");
  const client = new Client(`unix://${dir}/SDS`, grpc.credentials.createInsecure());
  try {
    // deno-lint-ignore no-explicit-any
    const open = (): grpc.ClientDuplexStream<Buffer, Buffer> => (client as any).StreamSecrets();
    const acked = open();
    let response = nextResponse(acked);
    acked.write(request({ type_url: TYPE_URL.secret, resource_names: ["default"] }));
    const first = await response;
    acked.write(request({
      type_url: TYPE_URL.secret,
      resource_names: ["default"],
      version_info: first.version_info,
      response_nonce: first.nonce,
    }));
    // A second stream on the same connection, answered after the server read the first one's ACK.
    const silent = open();
    const silentEnded = new Promise<void>((resolve) => {
      silent.on("end", resolve);
      silent.on("error", () => resolve());
    });
    response = nextResponse(silent);
    silent.write(request({ type_url: TYPE_URL.secret, resource_names: ["default"] }));
    await response;

    clock.tick(100);
    await silentEnded;
    assert.equal(await value(metrics, "counter", "total_stale_connections"), 1, "only the silent stream");
    // A probe on the acknowledging stream: answered, so the recycling pass left it open.
    response = nextResponse(acked);
    acked.write(request({ type_url: TYPE_URL.secret, resource_names: ["ROOTCA", "default"] }));
    assert.equal((await response).version_info, first.version_info);
    acked.end();
  } finally {
    client.close();
    await server.close(10);
    await Deno.remove(dir, { recursive: true });
  }
});

class Credentials implements CredentialSource {
  readonly byName = new Map<string, TlsCredential>();
  readonly listeners = new Set<(name: string) => void>();
  get(name: string): TlsCredential | undefined {
    return this.byName.get(name);
  }
  onChange(listener: (name: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  set(name: string, credential: TlsCredential): void {
    this.byName.set(name, credential);
    for (const listener of this.listeners) listener(name);
  }
}

Deno.test("SDS serves a gateway's credentials by name, with its CA certificates as <name>-cacert, and pushes changes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sds_server_" });
  const credentials = new Credentials();
  credentials.set("shop-cert", { certChainPem: "CHAIN-1", privateKeyPem: "KEY", caCertPem: "CA" });
  const server = await startSdsServer({
    socket: `${dir}/SDS`,
    secrets: new FixedSecret(),
    credentials,
    log: silentLogger,
  });
  const Client = grpc.makeClientConstructor(SDS_SERVICE_DEFINITION, "SDS");
  const client = new Client(`unix://${dir}/SDS`, grpc.credentials.createInsecure());
  try {
    // deno-lint-ignore no-explicit-any
    const call: grpc.ClientDuplexStream<Buffer, Buffer> = (client as any).StreamSecrets();
    const responses: Record<string, unknown>[][] = [];
    const Secret = schema.lookupType("envoy.extensions.transport_sockets.tls.v3.Secret");
    call.on("data", (bytes: Buffer) => {
      const response = Response.decode(bytes) as unknown as { resources: { value: Uint8Array }[] };
      responses.push(response.resources.map((r) => Secret.toObject(Secret.decode(r.value))));
    });
    call.on("error", () => {});
    const next = async (count: number) => {
      await waitFor(() => responses.length >= count, `response ${count}`, 5_000, 20);
      return JSON.stringify(responses[count - 1]);
    };
    const names = ["shop-cert", "shop-cert-cacert", "unknown-cert", "default"];
    call.write(request({ type_url: TYPE_URL.secret, resource_names: names }));
    const first = await next(1);
    assert.equal(responses[0].length, 3, first);
    assert.match(
      first,
      /"name":"shop-cert","tls_certificate":\{"certificate_chain":\{"inline_string":"CHAIN-1"/,
    );
    assert.match(
      first,
      /"name":"shop-cert-cacert","validation_context":\{"trusted_ca":\{"inline_string":"CA"\}/,
    );
    assert.match(first, /"name":"default"/);
    credentials.set("other-cert", { certChainPem: "X", privateKeyPem: "Y" });
    credentials.set("shop-cert", { certChainPem: "CHAIN-2", privateKeyPem: "KEY", caCertPem: "CA" });
    assert.match(await next(2), /"inline_string":"CHAIN-2"/);
    assert.equal(responses.length, 2, "a credential the stream did not ask for pushes nothing");
    call.end();
  } finally {
    client.close();
    await server.close(10);
    await Deno.remove(dir, { recursive: true });
  }
});

const Secret = schema.lookupType("envoy.extensions.transport_sockets.tls.v3.Secret");

/** The next response on `call` and the names of the secrets it carries. */
async function nextSecrets(call: grpc.ClientDuplexStream<Buffer, Buffer>) {
  const response = await nextResponse(call) as { nonce: string; resources?: { value: Uint8Array }[] };
  const names = (response.resources ?? []).map((any) => (Secret.decode(any.value) as { name?: string }).name);
  return { nonce: response.nonce, names: names.sort() };
}

/** An SDS server on a temporary socket, a client stream on it, and the metrics it counts in. */
async function sdsStream(secrets: FixedSecret, log: Logger = silentLogger, credentials?: CredentialSource) {
  const dir = await Deno.makeTempDir({ prefix: "sds_server_" });
  const metrics = new Metrics("agent", { version: "test", tag: "test" });
  const server = await startSdsServer({
    socket: `${dir}/SDS`,
    secrets,
    log,
    metrics,
    ...(credentials ? { credentials } : {}),
  });
  const Client = grpc.makeClientConstructor(SDS_SERVICE_DEFINITION, "SDS");
  const client = new Client(`unix://${dir}/SDS`, grpc.credentials.createInsecure());
  // deno-lint-ignore no-explicit-any
  const call: grpc.ClientDuplexStream<Buffer, Buffer> = (client as any).StreamSecrets();
  call.on("error", () => {});
  return {
    call,
    metrics,
    /** A further stream on the same server. */
    // deno-lint-ignore no-explicit-any
    open: (): grpc.ClientDuplexStream<Buffer, Buffer> => (client as any).StreamSecrets(),
    close: async () => {
      call.end();
      client.close();
      await server.close(10);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("SDS ignores a request that carries a stale nonce, as ADS does", async () => {
  const secrets = new FixedSecret();
  const { call, close } = await sdsStream(secrets);
  try {
    let response = nextSecrets(call);
    call.write(request({ type_url: TYPE_URL.secret, resource_names: ["default"] }));
    const first = await response;
    response = nextSecrets(call);
    for (const listener of secrets.listeners) listener(SECRET);
    const second = await response;
    // Sent before the proxy saw the second push: its names are not a subscription to answer.
    call.write(
      request({ type_url: TYPE_URL.secret, resource_names: ["ROOTCA"], response_nonce: first.nonce }),
    );
    // A probe that ACKs the latest push with more names: the next response answers it, nothing came before.
    response = nextSecrets(call);
    call.write(request({
      type_url: TYPE_URL.secret,
      resource_names: ["ROOTCA", "default"],
      response_nonce: second.nonce,
    }));
    assert.deepEqual((await response).names, ["ROOTCA", "default"]);
  } finally {
    await close();
  }
});

Deno.test("SDS answers a NACK with nothing, whatever names it carries: the proxy keeps its last good secret", async () => {
  const { call, metrics, close } = await sdsStream(new FixedSecret());
  try {
    let response = nextSecrets(call);
    call.write(request({ type_url: TYPE_URL.secret, resource_names: ["default"] }));
    const first = await response;
    call.write(request({
      type_url: TYPE_URL.secret,
      resource_names: ["ROOTCA", "default"],
      response_nonce: first.nonce,
      error_detail: { code: 3, message: "bad key" },
    }));
    // A probe without a nonce: the next response answers it, so the NACK was answered with nothing.
    response = nextSecrets(call);
    call.write(request({ type_url: TYPE_URL.secret, resource_names: ["ROOTCA"] }));
    assert.deepEqual((await response).names, ["ROOTCA"]);
    assert.equal(await value(metrics, "counter", "total_secret_update_failures"), 1);
    assert.equal(await value(metrics, "counter", "total_pushes"), 2);
  } finally {
    await close();
  }
});

/** The status `call` ends with. */
function statusOf(call: grpc.ClientDuplexStream<Buffer, Buffer>): Promise<grpc.StatusObject> {
  return new Promise((resolve) => call.on("status", resolve));
}

Deno.test("SDS sends a secret once however often the request names it", async () => {
  const { call, close } = await sdsStream(new FixedSecret());
  try {
    const response = nextSecrets(call);
    call.write(request({
      type_url: TYPE_URL.secret,
      resource_names: [...Array(10_000).fill("default"), "ROOTCA", "ROOTCA"],
    }));
    assert.deepEqual((await response).names, ["ROOTCA", "default"]);
  } finally {
    await close();
  }
});

Deno.test("SDS refuses bytes that are not a DiscoveryRequest with INVALID_ARGUMENT naming the fault, and serves the next stream", async () => {
  const { call, open, close } = await sdsStream(new FixedSecret());
  try {
    const status = statusOf(call);
    call.on("data", () => {});
    call.write(Buffer.from([0xff, 0xff, 0xff]));
    const { code, details } = await status;
    assert.equal(code, grpc.status.INVALID_ARGUMENT);
    assert.match(
      details,
      /^The SDS request is not a DiscoveryRequest: Truncated or oversized varint at byte 0/,
    );

    const next = open();
    next.on("error", () => {});
    const response = nextSecrets(next);
    next.write(request({ type_url: TYPE_URL.secret, resource_names: ["default"] }));
    assert.deepEqual((await response).names, ["default"]);
    next.end();
  } finally {
    await close();
  }
});

Deno.test("SDS counts rejections of names it does not serve under one label, and logs rejections once a period", async () => {
  const log = new RecordingLogger();
  const credentials = new Credentials();
  credentials.set("shop-cert", { certChainPem: "CHAIN", privateKeyPem: "KEY", caCertPem: "CA" });
  const { call, metrics, close } = await sdsStream(new FixedSecret(), log, credentials);
  try {
    const response = nextSecrets(call);
    const unknown = Array.from({ length: 1_000 }, (_, i) => `unknown-${i}-${"x".repeat(500)}`);
    const names = ["default", "shop-cert", "shop-cert-cacert", ...unknown];
    call.write(request({ type_url: TYPE_URL.secret, resource_names: names }));
    const { nonce } = await response;
    const nack = request({
      type_url: TYPE_URL.secret,
      resource_names: names,
      response_nonce: nonce,
      error_detail: { code: 3, message: "y".repeat(100_000) },
    });
    for (let i = 0; i < 20; i++) call.write(nack);
    await waitFor(
      async () => await value(metrics, "counter", "total_secret_update_failures") === 20 * 4,
      "every rejection counted",
    );
    const { values } = await metrics.counter("total_secret_update_failures").get();
    assert.deepEqual(
      values.map((v) => [v.labels.resource_name, v.value]).sort(),
      [["default", 20], ["other", 20], ["shop-cert", 20], ["shop-cert-cacert", 20]],
    );
    const lines = log.matching("warn", "proxy rejected a secret");
    assert.equal(lines.length, 1, "the first rejection of the period is logged, the others passed over");
    assert.ok(JSON.stringify(lines[0].fields).length < 2_000, "the line quotes excerpts of names and detail");
    assert.equal(lines[0].fields?.nameCount, names.length);
  } finally {
    await close();
  }
});
