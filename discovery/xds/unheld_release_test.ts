import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { TestAdsClient, testNode } from "./_test_ads_client.ts";
import { sidecarId, startTestServer, testPush, waitFor } from "./_test_support.ts";
import { UNHELD_RELEASE_PERIOD_MS, UnheldRelease } from "./unheld_release.ts";

const CLUSTERS = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`c${i}`, 0]));
const ENDPOINTS = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`c${i}`, [`10.0.0.${i + 1}`]]));

/** Opens a stream watching the endpoints of `clusters` and waits for its answer. */
async function watchEndpoints(port: number, pod: string, clusters: string[]): Promise<TestAdsClient> {
  const client = TestAdsClient.sotw(port);
  client.send({ node: testNode(sidecarId(pod)), type_url: TYPE_URL.endpoint, resource_names: clusters });
  const response = await client.next();
  assert.equal(response.resources.length, clusters.length);
  return client;
}

const cachedNames = (entries: { typeUrl: string; name: string }[]) =>
  entries.filter((e) => e.typeUrl === TYPE_URL.endpoint).map((e) => e.name).sort();

Deno.test("The server releases the cache entries of streams that closed after the grace, and keeps a connected proxy's", async () => {
  const clock = FakeTimers.createClock();
  const server = await startTestServer({
    push: testPush("v1", { clusters: CLUSTERS, endpoints: ENDPOINTS }),
    timers: timersOf(clock),
  });
  server.service.startReleasingUnheld();
  const attackers: TestAdsClient[] = [];
  const healthy = await watchEndpoints(server.port, "healthy", ["c0", "c1"]);
  try {
    for (let i = 2; i < 20; i += 3) {
      attackers.push(await watchEndpoints(server.port, `flood-${i}`, [`c${i}`, `c${i + 1}`, "c1"]));
    }
    assert.equal(cachedNames(server.service.cache.entries()).length, 14);
    for (const attacker of attackers) attacker.close();
    await waitFor(() => server.service.connections().length === 1, "the closed streams to end");

    clock.tick(UNHELD_RELEASE_PERIOD_MS);
    assert.equal(cachedNames(server.service.cache.entries()).length, 14, "within the grace, all stay");
    // A proxy reconnecting within the grace still hits.
    const builds = server.counts.eds;
    attackers.push(await watchEndpoints(server.port, "flood-back", ["c2", "c3"]));
    assert.equal(server.counts.eds, builds, "nothing was built again");
    attackers.at(-1)!.close();
    await waitFor(() => server.service.connections().length === 1, "the closed streams to end");

    clock.tick(3 * UNHELD_RELEASE_PERIOD_MS);
    assert.deepEqual(
      cachedNames(server.service.cache.entries()),
      ["c0", "c1"],
      "only the healthy proxy's stay",
    );
    assert.equal(server.service.memoStats().memos.shapes.entries, 0, "the shape memo is released too");

    clock.tick(10 * UNHELD_RELEASE_PERIOD_MS);
    assert.deepEqual(
      cachedNames(server.service.cache.entries()),
      ["c0", "c1"],
      "held entries are never released",
    );
  } finally {
    for (const attacker of attackers) attacker.close();
    healthy.close();
    server.service.close();
    await server.close();
  }
});

Deno.test("UnheldRelease sweeps once a period until stopped", () => {
  const clock = FakeTimers.createClock();
  let sweeps = 0;
  const release = new UnheldRelease(() => sweeps++, 1000, timersOf(clock));
  release.start();
  clock.tick(999);
  assert.equal(sweeps, 0);
  clock.tick(1);
  assert.equal(sweeps, 1);
  clock.tick(3000);
  assert.equal(sweeps, 4);
  release.stop();
  clock.tick(5000);
  assert.equal(sweeps, 4);
  assert.throws(() => new UnheldRelease(() => {}, 0), RangeError);
});
