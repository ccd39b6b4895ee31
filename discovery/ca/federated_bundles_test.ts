import "reflect-metadata";
import assert from "node:assert/strict";
import { silentLogger } from "@mesh/shared/log/logger";
import type { Timers } from "@mesh/shared/time/timers";
import { createSelfSignedCa } from "@mesh/shared/pki";
import { BUNDLE_REFRESH_MS, BUNDLE_RETRY_MS, derKey, FederatedBundles } from "./federated_bundles.ts";

/** Timers that run only when the test says, recording the delays asked for. */
class ManualTimers implements Timers {
  readonly pending = new Map<number, { callback: () => void; ms: number }>();
  #next = 1;
  #rearming?: { left: number; done: () => void };
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.pending.set(id, { callback, ms });
    if (this.#rearming !== undefined && --this.#rearming.left === 0) {
      this.#rearming.done();
      this.#rearming = undefined;
    }
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  now(): number {
    return 0;
  }
  /** The delays of the timers waiting. */
  delays(): number[] {
    return [...this.pending.values()].map((t) => t.ms);
  }
  /** Runs every waiting timer once; resolves when each has armed the next (a refresh ends by doing so). */
  runAll(): Promise<void> {
    const due = [...this.pending.values()];
    this.pending.clear();
    const rearmed = Promise.withResolvers<void>();
    this.#rearming = { left: due.length, done: rearmed.resolve };
    if (due.length === 0) rearmed.resolve();
    for (const timer of due) timer.callback();
    return rearmed.promise;
  }
}

async function authority(org: string) {
  const ca = await createSelfSignedCa({ org, ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
  const der = new Uint8Array(ca.certificate.rawData);
  return { der, x5c: derKey(der) };
}

const bundleOf = (x5c: string, hint?: number) =>
  JSON.stringify({
    keys: [{ use: "x509-svid", x5c: [x5c] }],
    ...(hint ? { spiffe_refresh_hint: hint } : {}),
  });

Deno.test("FederatedBundles loads each bundle, refreshes it at its hint and maps its authorities to its domain", async () => {
  const first = await authority("partner one");
  const second = await authority("partner two");
  let served = bundleOf(first.x5c, 10);
  const timers = new ManualTimers();
  const bundles = new FederatedBundles({
    endpoints: [{ trustDomain: "partner.example", url: "https://bundles.test/partner" }],
    log: silentLogger,
    fetchText: () => Promise.resolve(served),
    timers,
  });
  let changes = 0;
  bundles.onChange(() => changes++);
  await bundles.start();
  assert.deepEqual(bundles.trustDomains(), ["partner.example"]);
  assert.equal(bundles.trustDomainOfAnchor(first.der), "partner.example");
  assert.equal(bundles.trustDomainOfAnchor(second.der), undefined);
  assert.match(bundles.rootsPem(), /BEGIN CERTIFICATE/);
  assert.equal(changes, 1);
  assert.deepEqual(timers.delays(), [BUNDLE_REFRESH_MS.min], "a 10 s hint is raised to the minimum");

  await timers.runAll();
  assert.equal(changes, 1, "the same bundle again is no change");

  served = bundleOf(second.x5c, 99_999);
  await timers.runAll();
  assert.equal(changes, 2);
  assert.equal(bundles.trustDomainOfAnchor(second.der), "partner.example");
  assert.equal(
    bundles.trustDomainOfAnchor(first.der),
    undefined,
    "a rotated-out authority is no longer trusted",
  );
  assert.deepEqual(timers.delays(), [BUNDLE_REFRESH_MS.max], "a long hint is capped");
  bundles.stop();
  assert.deepEqual(timers.delays(), []);
});

Deno.test("FederatedBundles keeps the last good bundle when a fetch fails, and retries", async () => {
  const partner = await authority("partner");
  let fail = false;
  const timers = new ManualTimers();
  const bundles = new FederatedBundles({
    endpoints: [{ trustDomain: "partner.example", url: "https://bundles.test/partner" }],
    log: silentLogger,
    fetchText: () =>
      fail ? Promise.reject(new Error("connection refused")) : Promise.resolve(bundleOf(partner.x5c)),
    timers,
  });
  await bundles.start();
  assert.deepEqual(timers.delays(), [BUNDLE_REFRESH_MS.default]);
  fail = true;
  await timers.runAll();
  assert.equal(bundles.trustDomainOfAnchor(partner.der), "partner.example");
  assert.deepEqual(timers.delays(), [BUNDLE_RETRY_MS]);
  bundles.stop();
});

Deno.test("FederatedBundles starts without a bundle it cannot fetch, and trusts nothing for that domain", async () => {
  const timers = new ManualTimers();
  const bundles = new FederatedBundles({
    endpoints: [{ trustDomain: "partner.example", url: "https://bundles.test/partner" }],
    log: silentLogger,
    fetchText: () => Promise.resolve("<html>not a bundle</html>"),
    timers,
  });
  await bundles.start();
  assert.deepEqual(bundles.trustDomains(), []);
  assert.equal(bundles.rootsPem(), "");
  assert.deepEqual(timers.delays(), [BUNDLE_RETRY_MS]);
  bundles.stop();
});
