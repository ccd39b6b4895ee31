import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import * as grpc from "@grpc/grpc-js";
import { silentLogger } from "@mesh/shared/log/logger";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { Metrics } from "@mesh/shared/metrics/metrics";
import {
  createCertificateRequest,
  createSelfSignedCa,
  generateKeyPair,
  issueCertificate,
} from "@mesh/shared/pki";
import { CaKeyStore } from "./ca_keys.ts";
import { ClientCertAuthenticator } from "./caller_authenticator.ts";
import { CaService, type CaServiceDeps, type CsrLimits, DEFAULT_CSR_LIMITS } from "./ca_service.ts";

const keys = await CaKeyStore.open({
  rootCaDir: `/tmp/mesh-no-such-ca-dir-${crypto.randomUUID()}`,
  trustDomain: "cluster.local",
  selfSignedTtlMs: 24 * 3_600_000,
  rsaKeySize: 2048,
  gracePercent: 20,
  now: () => new Date(),
  log: silentLogger,
});
const other = await createSelfSignedCa({ org: "x", ttlMs: 3_600_000 });
const pair = await generateKeyPair({ algorithm: "ECDSA" });
const csr = await createCertificateRequest(pair, {});

/** A client certificate (DER) from another CA naming `uris`, or only a DNS name when there are none. */
async function clientCert(uris: string[]): Promise<Uint8Array> {
  const cert = await issueCertificate(other, {
    publicKey: pair.publicKey,
    ttlMs: 3_600_000,
    ...(uris.length ? { uris } : { dnsNames: ["a.example"] }),
  });
  return new Uint8Array(cert.rawData);
}

function service(
  limits: Partial<CsrLimits> = {},
  extra: Partial<CaServiceDeps> = {},
): { ca: CaService; metrics: Metrics } {
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const ca = new CaService({
    keys,
    policy: { defaultTtlMs: 3_600_000, maxTtlMs: 7_200_000 },
    limits: { ...DEFAULT_CSR_LIMITS, ...limits },
    authenticators: [new ClientCertAuthenticator()],
    now: () => new Date(),
    log: silentLogger,
    metrics,
    ...extra,
  });
  return { ca, metrics };
}

async function counted(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await metrics.counter(name).get()).values
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((n, v) => n + v.value, 0);
}

/** Asserts that `call` fails with gRPC status `code` and a message matching `message`; returns the error. */
async function refused(
  call: Promise<unknown>,
  code: grpc.status,
  message: RegExp,
): Promise<Error & { metadata?: grpc.Metadata }> {
  const error = await call.then(() => assert.fail("expected a refusal"), (e) => e);
  assert.equal(error.code, code, error.message);
  assert.match(error.message, message);
  return error;
}

const ALICE = "spiffe://cluster.local/ns/a/sa/alice";
const BOB = "spiffe://cluster.local/ns/a/sa/bob";

Deno.test("The CA service counts each outcome in the ca_server metrics", async () => {
  const { ca, metrics } = service();
  await ca.createCertificate({ csr, validityDuration: 60 }, {
    peerCertificateDer: await clientCert([ALICE]),
    authorization: [],
  });
  await assert.rejects(() =>
    ca.createCertificate({ csr, validityDuration: 60 }, {
      peerCertificateDer: clientCert([]) as never,
      authorization: [],
    })
  );
  await assert.rejects(async () =>
    ca.createCertificate({ csr, validityDuration: 60 }, {
      peerCertificateDer: await clientCert([]),
      authorization: [],
    })
  );
  await assert.rejects(() =>
    ca.createCertificate({ csr: "junk", validityDuration: 60 }, { authorization: [] })
  );
  await assert.rejects(async () =>
    ca.createCertificate({ csr: "junk", validityDuration: 60 }, {
      peerCertificateDer: await clientCert([ALICE]),
      authorization: [],
    })
  );
  assert.equal(await counted(metrics, "ca_server_csr_count"), 5);
  assert.equal(await counted(metrics, "ca_server_success_cert_issuance_count"), 1);
  assert.equal(await counted(metrics, "ca_server_authentication_failure_count"), 3);
  assert.equal(await counted(metrics, "ca_server_id_extraction_err_count"), 1);
  assert.equal(await counted(metrics, "ca_server_csr_parsing_err_count"), 1);
});

Deno.test("The CA refuses a CSR over CASERVER_CSR_MAX_BYTES before parsing it, naming the limit", async () => {
  // A valid, well-signed CSR that is only too long: it signs once the limit allows it.
  const names = Array.from({ length: 800 }, (_, i) => `host-${i}.example.com`);
  const long = await createCertificateRequest(pair, { dnsNames: names });
  assert.ok(long.length > DEFAULT_CSR_LIMITS.maxCsrBytes);
  const peer = { peerCertificateDer: await clientCert([ALICE]), authorization: [] };

  const { ca, metrics } = service();
  await refused(
    ca.createCertificate({ csr: long, validityDuration: 60 }, peer),
    grpc.status.INVALID_ARGUMENT,
    /CSR of \d+ bytes is too large: expected at most 16384 bytes \(CASERVER_CSR_MAX_BYTES\)/,
  );
  // Junk of the same length is refused for its length too: nothing of it was decoded.
  await refused(
    ca.createCertificate({ csr: "x".repeat(long.length), validityDuration: 60 }, peer),
    grpc.status.INVALID_ARGUMENT,
    /too large/,
  );
  assert.equal(await counted(metrics, "ca_server_csr_refused_count", { reason: "too_large" }), 2);
  assert.equal(await counted(metrics, "ca_server_csr_parsing_err_count"), 0);
  assert.equal(await counted(metrics, "ca_server_success_cert_issuance_count"), 0);

  const roomy = service({ maxCsrBytes: 65_536 });
  const { certChain } = await roomy.ca.createCertificate({ csr: long, validityDuration: 60 }, peer);
  assert.equal(certChain.length, 2);
});

Deno.test("The CA counts every refused CSR and logs one per identity and reason a minute", async () => {
  let now = 0;
  const log = new RecordingLogger();
  const { ca, metrics } = service({ rateBurst: 1_000, rateQps: 1_000 }, { log, monotonicNow: () => now });
  const peer = { peerCertificateDer: await clientCert([ALICE]), authorization: [] };
  for (let i = 0; i < 20; i++) {
    await refused(ca.createCertificate({ csr: `junk ${i}`, validityDuration: 60 }, peer), 3, /./);
  }
  assert.equal(await counted(metrics, "ca_server_csr_parsing_err_count"), 20);
  assert.deepEqual(log.lines.map((l) => [l.msg, l.fields?.reason]), [[
    "CA refused a request",
    "csr_parsing",
  ]]);
  now = 60_000;
  await refused(ca.createCertificate({ csr: "junk again", validityDuration: 60 }, peer), 3, /./);
  assert.equal(log.lines.at(-1)?.fields?.notLogged, 19, "the next line says how many were passed over");
});

Deno.test("The CA rate-limits each identity: a burst, then qps, refused with RESOURCE_EXHAUSTED and the retry time", async () => {
  const clock = FakeTimers.createClock(0);
  const { ca, metrics } = service({ rateBurst: 3, rateQps: 2 }, { monotonicNow: () => clock.now });
  const alice = { peerCertificateDer: await clientCert([ALICE]), authorization: [] };
  const bob = { peerCertificateDer: await clientCert([BOB]), authorization: [] };
  const ask = (who: typeof alice) => ca.createCertificate({ csr, validityDuration: 60 }, who);

  for (let i = 0; i < 3; i++) await ask(alice);
  const error = await refused(
    ask(alice),
    grpc.status.RESOURCE_EXHAUSTED,
    /Too many certificate requests from "spiffe:\/\/cluster\.local\/ns\/a\/sa\/alice".*retry in 500 ms/,
  );
  assert.deepEqual(error.metadata?.get("grpc-retry-pushback-ms"), ["500"]);
  await ask(bob);

  clock.tick(250);
  await refused(ask(alice), grpc.status.RESOURCE_EXHAUSTED, /retry in 250 ms/);
  clock.tick(250);
  await ask(alice);
  await refused(ask(alice), grpc.status.RESOURCE_EXHAUSTED, /retry in 500 ms/);

  assert.equal(await counted(metrics, "ca_server_csr_refused_count", { reason: "rate_limited" }), 3);
  assert.equal(await counted(metrics, "ca_server_success_cert_issuance_count"), 5);
});

Deno.test("The CA refuses a CSR with RESOURCE_EXHAUSTED once its signing queue is full", async () => {
  const { ca, metrics } = service({ maxConcurrentSignings: 1, signingQueueSize: 1 });
  const ids = [1, 2, 3].map((i) => `spiffe://cluster.local/ns/a/sa/w${i}`);
  const peers = await Promise.all(ids.map(async (id) => ({
    peerCertificateDer: await clientCert([id]),
    authorization: [],
  })));
  // Started together: the first signs, the second waits, the third finds the queue full.
  const calls = peers.map((peer) => ca.createCertificate({ csr, validityDuration: 60 }, peer));
  const [first, second, third] = await Promise.allSettled(calls);
  assert.equal(first.status, "fulfilled");
  assert.equal(second.status, "fulfilled");
  assert.equal(third.status, "rejected");
  await refused(
    calls[2],
    grpc.status.RESOURCE_EXHAUSTED,
    /1 certificate requests are waiting.*retry in 1000 ms/,
  );
  assert.equal(await counted(metrics, "ca_server_csr_refused_count", { reason: "queue_full" }), 1);
  assert.deepEqual(ca.queueStats, { running: 0, waiting: 0 });
  // With the queue drained, the refused caller is served.
  await ca.createCertificate({ csr, validityDuration: 60 }, peers[2]);
});
