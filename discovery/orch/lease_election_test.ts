import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { silentLogger } from "@mesh/shared/log/logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { orchLeaseApi } from "./orch_lease_api.ts";
import { leaseDurationsFor, LeaseElector } from "./lease_election.ts";
import type { LeaseApi } from "./lease_record.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const DUTY = "mesh-leader";
const durations = leaseDurationsFor(30_000);

/** A test API server, a Lease client of it, and fake clocks starting at the same instant. */
async function world() {
  const clock = FakeTimers.createClock(T0);
  const server = OrchApiServer.start({ wallClock: () => clock.now });
  const dir = await Deno.makeTempDir({ prefix: "mesh_lease_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, server.kubeconfig());
  const api = orchLeaseApi(
    loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    new RateLimiter(1000, 100),
  );
  const elector = (identity: string, options: { api?: LeaseApi; clock?: FakeTimers.Clock } = {}) => {
    const own = options.clock ?? clock;
    return new LeaseElector({
      duty: DUTY,
      namespace: "mesh-system",
      identity,
      api: options.api ?? api,
      durations,
      log: silentLogger,
      timers: timersOf(own),
      wallClock: () => new Date(own.now),
    });
  };
  const lease = async () => (await api.get("mesh-system", DUTY))?.record;
  const close = async () => {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  };
  return { clock, server, api, elector, lease, close };
}

/** Moves `clock` on by `ms` and waits for the attempt the retry timer started to finish. */
async function advance(clock: FakeTimers.Clock, elector: LeaseElector, ms: number): Promise<void> {
  await clock.tickAsync(ms);
  await elector.idle();
}

Deno.test("A replica wins an absent Lease, runs the duty, renews every retry period and releases it on stop", async () => {
  const w = await world();
  try {
    const a = w.elector("replica-a");
    const signals: AbortSignal[] = [];
    a.whileLeading((signal) => signals.push(signal));
    a.start();
    await a.idle();
    assert.equal(a.leading(), true);
    assert.equal(signals.length, 1);
    const won = await w.lease();
    assert.equal(won?.holderIdentity, "replica-a");
    assert.equal(won?.leaseDurationSeconds, 30);
    assert.equal(won?.renewTime, new Date(T0).toISOString());

    await advance(w.clock, a, durations.retryMs);
    const renewed = await w.lease();
    assert.equal(renewed?.renewTime, new Date(T0 + durations.retryMs).toISOString());
    assert.equal(renewed?.acquireTime, won?.acquireTime);
    assert.equal(signals[0].aborted, false);

    // A duty registered while leading starts at once.
    const late: AbortSignal[] = [];
    a.whileLeading((signal) => late.push(signal));
    assert.equal(late.length, 1);

    await a.stop();
    assert.equal(signals[0].aborted, true);
    assert.equal(late[0].aborted, true);
    assert.equal(a.leading(), false);
    const released = await w.lease();
    assert.equal(released?.holderIdentity, "");
    assert.equal(released?.leaseDurationSeconds, 1);
  } finally {
    await w.close();
  }
});

Deno.test("A Lease held by a replica that vanished is taken only after its duration passes unrenewed", async () => {
  const w = await world();
  try {
    const a = w.elector("replica-a", { clock: FakeTimers.createClock(T0) });
    a.start();
    await a.idle();
    assert.equal(a.leading(), true);
    // replica-a vanishes: its timers never run again, and its Lease stays as it last wrote it.
    const clockB = w.clock;
    const survivor = w.elector("replica-b");
    survivor.start();
    await survivor.idle();
    assert.equal(survivor.leading(), false);
    assert.equal(survivor.status().holder, "replica-a");
    for (let waited = 0; waited + durations.retryMs < durations.leaseMs; waited += durations.retryMs) {
      await advance(clockB, survivor, durations.retryMs);
      assert.equal(survivor.leading(), false, `taken after ${waited + durations.retryMs} ms`);
    }
    await advance(clockB, survivor, durations.retryMs);
    assert.equal(survivor.leading(), true);
    const taken = await w.lease();
    assert.equal(taken?.holderIdentity, "replica-b");
    assert.equal(taken?.leaseTransitions, 1);
    assert.deepEqual(w.server.ledger.overlaps, []);
    await survivor.stop();
    await a.stop();
  } finally {
    await w.close();
  }
});

Deno.test("A renewal that arrives while a candidate's read is in flight counts from when the read answered", async () => {
  const w = await world();
  try {
    const clockA = FakeTimers.createClock(T0);
    const a = w.elector("replica-a", { clock: clockA });
    a.start();
    await a.idle();
    assert.equal(a.leading(), true);
    // replica-b's first read is sent now and answers only after replica-a renewed; later reads answer at once.
    let answerFirst: (() => void) | undefined;
    const slow: LeaseApi = {
      ...w.api,
      get: (namespace, name) => {
        if (answerFirst !== undefined || b.status().holder !== "") return w.api.get(namespace, name);
        return new Promise((resolve) => answerFirst = () => resolve(w.api.get(namespace, name)));
      },
    };
    const b = w.elector("replica-b", { api: slow });
    b.start();
    await w.clock.tickAsync(durations.retryMs);
    await advance(clockA, a, durations.retryMs);
    // replica-a renewed at T0 + retry while b's read was in flight, then vanished (its clock never moves again).
    answerFirst!();
    await b.idle();
    assert.equal(b.status().holder, "replica-a");
    // The Lease's duration from when the read was sent passes; from the renewal it returned, it has not.
    for (let at = 2 * durations.retryMs; at <= durations.leaseMs; at += durations.retryMs) {
      await advance(w.clock, b, durations.retryMs);
      assert.equal(b.leading(), false, `taken at T0 + ${at} ms, before the renewal it read had run out`);
    }
    await advance(w.clock, b, durations.retryMs);
    assert.equal(b.leading(), true);
    assert.deepEqual(w.server.ledger.overlaps, []);
    await b.stop();
    await a.stop();
  } finally {
    await w.close();
  }
});

Deno.test("A leader that sees another holder after a conflicting write stops its duty at once", async () => {
  const w = await world();
  try {
    let steal = false;
    // Between the leader's read and its write another replica takes the Lease: the write is refused (409).
    const racing: LeaseApi = {
      get: (ns, name) => w.api.get(ns, name),
      create: (ns, name, record) => w.api.create(ns, name, record),
      async update(ns, name, record, version) {
        if (steal) {
          steal = false;
          const current = await w.api.get(ns, name);
          await w.api.update(
            ns,
            name,
            { ...current!.record, holderIdentity: "replica-b" },
            current!.resourceVersion,
          );
        }
        return await w.api.update(ns, name, record, version);
      },
    };
    const a = w.elector("replica-a", { api: racing });
    const signals: AbortSignal[] = [];
    a.whileLeading((signal) => signals.push(signal));
    a.start();
    await a.idle();
    assert.equal(a.leading(), true);
    steal = true;
    await advance(w.clock, a, durations.retryMs);
    assert.equal(a.leading(), false);
    assert.equal(signals[0].aborted, true);
    assert.equal(a.status().holder, "replica-b");
    assert.ok(w.server.requests.some((r) => r.startsWith("PUT ")));
    await a.stop();
    assert.equal((await w.lease())?.holderIdentity, "replica-b", "a replica that lost never releases");
  } finally {
    await w.close();
  }
});

Deno.test("A leader that cannot renew keeps its duty until the renew deadline, then stops it", async () => {
  const w = await world();
  try {
    let reachable = true;
    const flaky: LeaseApi = {
      get: (ns, name) => reachable ? w.api.get(ns, name) : Promise.reject(new Error("connection refused")),
      create: (ns, name, record) => w.api.create(ns, name, record),
      update: (ns, name, record, version) =>
        reachable ? w.api.update(ns, name, record, version) : Promise.reject(new Error("connection refused")),
    };
    const a = w.elector("replica-a", { api: flaky });
    const signals: AbortSignal[] = [];
    a.whileLeading((signal) => signals.push(signal));
    a.start();
    await a.idle();
    reachable = false;
    await advance(w.clock, a, durations.retryMs);
    assert.equal(a.leading(), true, "one failed renewal is within the deadline");
    await w.clock.tickAsync(durations.renewDeadlineMs - durations.retryMs - 1);
    assert.equal(a.leading(), true);
    await w.clock.tickAsync(1);
    assert.equal(a.leading(), false);
    assert.equal(signals[0].aborted, true);
    // Once the API server answers again, the replica takes its own Lease back.
    reachable = true;
    await w.clock.tickAsync(durations.retryMs);
    await a.idle();
    assert.equal(a.leading(), true);
    assert.equal(signals.length, 2);
    await a.stop();
  } finally {
    await w.close();
  }
});

Deno.test("Two electors on one Lease: one leads, the other takes over at once when it is released", async () => {
  const w = await world();
  try {
    const a = w.elector("replica-a");
    const b = w.elector("replica-b");
    a.start();
    await a.idle();
    b.start();
    await b.idle();
    assert.deepEqual([a.leading(), b.leading()], [true, false]);
    await a.stop();
    await advance(w.clock, b, durations.retryMs);
    assert.equal(b.leading(), true);
    assert.deepEqual(w.server.ledger.overlaps, []);
    await b.stop();
  } finally {
    await w.close();
  }
});
