import assert from "node:assert/strict";
import type { PushContext } from "../push/push_context.ts";
import { grpcGenerators } from "./grpc_generators.ts";
import { envoyGenerators } from "./envoy/envoy_generators.ts";
import { envoyResources, envoySidecar } from "./envoy/_test_envoy.ts";
import { grpcProxy, networking, run, World } from "./_test_world.ts";

/**
 * Members of a snapshot that are not its state: the memos of what generators derive from it (caches of pure
 * functions of the snapshot, written as generators ask) and the live secret store (read by digest).
 */
const MEMOS = new Set(["derived", "clusterNames", "secrets"]);

/** The paths under `root` to anything that can still be changed. */
function thawed(root: PushContext): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  const visit = (value: unknown, path: string) => {
    if (value === null || (typeof value !== "object" && typeof value !== "function")) return;
    if (typeof value === "function" || seen.has(value)) return;
    seen.add(value);
    if (!Object.isFrozen(value)) found.push(path);
    if (value instanceof Map) {
      assertRefuses(() => value.set("probe", 1), `${path}.set`, found);
      for (const [key, entry] of value) visit(entry, `${path}[${String(key)}]`);
    } else if (value instanceof Set) {
      assertRefuses(() => value.add("probe"), `${path}.add`, found);
      for (const entry of value) visit(entry, `${path}{}`);
    }
    for (const key of Object.keys(value)) {
      if (value === root && MEMOS.has(key)) continue;
      visit((value as Record<string, unknown>)[key], `${path}.${key}`);
    }
  };
  visit(root, "push");
  for (const shards of root.endpointIndex.all()) visit(shards, `push.endpointIndex(${shards.hostname})`);
  return found;
}

function assertRefuses(change: () => unknown, path: string, found: string[]): void {
  try {
    change();
    found.push(path);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
}

Deno.test("A published snapshot is deep-frozen, its endpoints included, after generation", () => {
  const world = new World().apply(...envoyResources());
  const push = world.push();
  for (const proxy of [envoySidecar("example", "10.0.2.1"), envoySidecar("example", "10.0.9.9")]) {
    for (const generator of envoyGenerators()) run(generator, proxy, push);
  }
  for (const generator of grpcGenerators()) run(generator, grpcProxy(), push);
  assert.ok(push.endpointIndex.all().length > 0, "the snapshot has endpoints to check");
  assert.deepEqual(thawed(push), []);
});

Deno.test("A snapshot's endpoints stay as published while the registry changes", () => {
  const world = new World().apply(...envoyResources());
  const push = world.push();
  const before = JSON.stringify(push.endpointIndex.all());
  world.apply(networking("WorkloadEntry", "example", "ratings-2", {
    address: "10.0.2.2",
    labels: { app: "ratings" },
  }));
  assert.equal(JSON.stringify(push.endpointIndex.all()), before);
  const ratings = (p: PushContext) => p.endpointIndex.shards("ratings.example.svc.cluster.local", "example");
  const next = push.withEndpoints(world.endpoints.snapshot());
  assert.equal(ratings(next).version, ratings(push).version + 1, "the next endpoint push sees the change");
  assert.equal(next.version, push.version, "everything else is the snapshot's own");
});
