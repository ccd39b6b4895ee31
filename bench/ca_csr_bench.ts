/**
 * The CA under a flood of CSRs: how long the event loop is held while they are signed. A probe timer asks for
 * a turn of the loop every 10 ms while the CSRs are in flight, as `/ready` and pushes would; each benchmark
 * prints the probe's delay (p50, p99, max) beside the time the whole batch took (BENCHMARKS.md). Where one
 * signing's CPU goes, by thread, is `bench/ca_signing_cpu.ts`.
 *
 * @module
 */
import { setImmediate } from "node:timers";
import { silentLogger } from "../shared/log/logger.ts";
import {
  createCertificateRequest,
  createSelfSignedCa,
  generateKeyPair,
  issueCertificate,
} from "../shared/pki/mod.ts";
import { openBenchCaKeys } from "./_ca_keys.ts";
import { ClientCertAuthenticator } from "../discovery/ca/caller_authenticator.ts";
import { CaService, type CsrLimits, DEFAULT_CSR_LIMITS } from "../discovery/ca/ca_service.ts";

const keys = await openBenchCaKeys();
const pair = await generateKeyPair({ algorithm: "ECDSA" });
const csr = await createCertificateRequest(pair, {});
// About 527 KB of PEM, like the finding's: a well-formed request with six 64 KiB URIs.
const huge = await createCertificateRequest(pair, {
  uris: Array.from({ length: 6 }, (_, i) => `spiffe://cluster.local/${String(i).repeat(64 * 1024)}`),
});
const issuer = await createSelfSignedCa({ org: "bench", ttlMs: 3_600_000 });
const peer = {
  peerCertificateDer: new Uint8Array(
    (await issueCertificate(issuer, {
      publicKey: pair.publicKey,
      uris: ["spiffe://cluster.local/ns/bench/sa/flood"],
      ttlMs: 3_600_000,
    })).rawData,
  ),
  authorization: [],
};

function service(limits: Partial<CsrLimits>): CaService {
  return new CaService({
    keys,
    policy: { defaultTtlMs: 3_600_000, maxTtlMs: 7_200_000 },
    limits: { ...DEFAULT_CSR_LIMITS, ...limits },
    authenticators: [new ClientCertAuthenticator()],
    now: () => new Date(),
    log: silentLogger,
  });
}

/** Sends `count` copies of `csrPem` at once; prints the probe's delays and how many were signed. */
async function flood(label: string, ca: CaService, csrPem: string, count: number): Promise<void> {
  const delays: number[] = [];
  let done = false;
  const probe = (async () => {
    while (!done) {
      const asked = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 0));
      delays.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const started = performance.now();
  // Requests arrive 50 to a turn of the loop, as from one 64 KiB read of a connection sending ~1.2 KiB calls.
  const calls: Promise<boolean>[] = [];
  for (let i = 0; i < count; i++) {
    calls.push(
      ca.createCertificate({ csr: csrPem, validityDuration: 0 }, peer).then(() => true, () => false),
    );
    if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
  const signed = (await Promise.all(calls)).filter((ok) => ok).length;
  const took = performance.now() - started;
  done = true;
  await probe;
  delays.sort((a, b) => a - b);
  const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(delays.length * q))].toFixed(1);
  console.log(
    `${label}: ${signed}/${count} signed in ${took.toFixed(0)} ms; loop delay p50 ${at(0.5)} ms, ` +
      `p99 ${at(0.99)} ms, max ${at(1)} ms`,
  );
}

const once = { n: 1, warmup: 0, group: "ca" };

const unlimitedRate = { rateBurst: 1_000_000, rateQps: 1_000_000 };

Deno.bench("CA: 1000 CSRs at once, no signing bound (as before #35.6)", once, async () => {
  await flood(
    "no bound",
    service({ ...unlimitedRate, maxConcurrentSignings: 1024, signingQueueSize: 1_000_000 }),
    csr,
    1000,
  );
});

Deno.bench("CA: 1000 CSRs at once, 2 signings at a time (default)", once, async () => {
  await flood("2 at a time", service({ ...unlimitedRate }), csr, 1000);
});

Deno.bench("CA: 2000 CSRs at once from one identity, default limits", once, async () => {
  await flood("one identity", service({}), csr, 2000);
});

Deno.bench("CA: 20 CSRs of 527 KB parsed (no size cap, as before #35.6)", once, async () => {
  await flood("527 KB parsed", service({ ...unlimitedRate, maxCsrBytes: 1 << 20 }), huge, 20);
});

Deno.bench("CA: 20 CSRs of 527 KB refused by CASERVER_CSR_MAX_BYTES", once, async () => {
  await flood("527 KB refused", service({ ...unlimitedRate }), huge, 20);
});
