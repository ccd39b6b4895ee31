import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { silentLogger } from "@mesh/shared/log/logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { loadOrchConfig } from "./orch_client.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { orchLeaseApi } from "./orch_lease_api.ts";
import { leaseDurationsFor } from "./lease_election.ts";
import { replicaLeaseName, ReplicaLiveness } from "./replica_liveness.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const durations = leaseDurationsFor(30_000);

/** A test API server, its Lease client, and a replica's liveness on a fake clock of its own. */
async function world() {
  const server = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_liveness_" });
  await Deno.writeTextFile(`${dir}/kubeconfig`, server.kubeconfig());
  const api = orchLeaseApi(
    loadOrchConfig({ orchConfig: `${dir}/kubeconfig`, serviceHost: "" }),
    new RateLimiter(1000, 100),
  );
  const replica = (identity: string, start = T0) => {
    const clock = FakeTimers.createClock(start);
    const liveness = new ReplicaLiveness({
      identity,
      namespace: "mesh-system",
      api,
      durations,
      log: silentLogger,
      timers: timersOf(clock),
      wallClock: () => new Date(clock.now),
    });
    return { clock, liveness };
  };
  const close = async () => {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  };
  return { api, replica, close };
}

Deno.test("A replica holds its liveness Lease, renews it every retry period and releases it on stop", async () => {
  const w = await world();
  try {
    const a = w.replica("discovery-a");
    a.liveness.start();
    await a.liveness.idle();
    const held = (await w.api.get("mesh-system", replicaLeaseName("discovery-a")))?.record;
    assert.equal(held?.holderIdentity, "discovery-a");
    assert.equal(held?.leaseDurationSeconds, 30);
    await a.clock.tickAsync(durations.retryMs);
    await a.liveness.idle();
    const renewed = (await w.api.get("mesh-system", replicaLeaseName("discovery-a")))?.record;
    assert.equal(renewed?.renewTime, new Date(T0 + durations.retryMs).toISOString());
    await a.liveness.stop();
    const released = (await w.api.get("mesh-system", replicaLeaseName("discovery-a")))?.record;
    assert.equal(released?.holderIdentity, "");
  } finally {
    await w.close();
  }
});

Deno.test("A replica that stops renewing is judged expired a lease duration after the reader last saw its Lease change, never sooner", async () => {
  const w = await world();
  try {
    const a = w.replica("discovery-a");
    a.liveness.start();
    await a.liveness.idle();
    // The reader's wall clock is an hour ahead of the writer's: only its own clock counts.
    const b = w.replica("discovery-b", T0 + 3_600_000);
    const reader = b.liveness.reader();
    const first = await reader.expiry("discovery-a");
    assert.deepEqual(first, { expired: false, at: b.clock.now + durations.leaseMs });

    // While discovery-a renews, every change starts the reader's count again.
    for (let i = 0; i < 8; i++) {
      await a.clock.tickAsync(durations.retryMs);
      await a.liveness.idle();
      await b.clock.tickAsync(durations.retryMs);
      assert.equal((await reader.expiry("discovery-a")).expired, false);
    }
    // discovery-a dies (its timers never run again): the Lease stops changing.
    const lastSeenAt = b.clock.now;
    await b.clock.tickAsync(durations.leaseMs - 1);
    assert.deepEqual(await reader.expiry("discovery-a"), {
      expired: false,
      at: lastSeenAt + durations.leaseMs,
    });
    await b.clock.tickAsync(1);
    assert.deepEqual(await reader.expiry("discovery-a"), {
      expired: true,
      at: lastSeenAt + durations.leaseMs,
    });
    await b.clock.tickAsync(10_000);
    assert.deepEqual(
      await reader.expiry("discovery-a"),
      { expired: true, at: lastSeenAt + durations.leaseMs },
      "the expiry stays where it was",
    );
    await a.liveness.stop();
  } finally {
    await w.close();
  }
});

Deno.test("A replica that stopped cleanly counts as expired at once; one with no Lease after a whole duration", async () => {
  const w = await world();
  try {
    const a = w.replica("discovery-a");
    a.liveness.start();
    await a.liveness.idle();
    await a.liveness.stop();
    const b = w.replica("discovery-b");
    const reader = b.liveness.reader();
    assert.deepEqual(await reader.expiry("discovery-a"), { expired: true, at: b.clock.now });

    assert.equal((await reader.expiry("discovery-never")).expired, false);
    await b.clock.tickAsync(durations.leaseMs);
    assert.equal((await reader.expiry("discovery-never")).expired, true);
    assert.equal(
      (await reader.expiry("discovery-b")).expired,
      false,
      "a replica always lives for itself",
    );
  } finally {
    await w.close();
  }
});
