import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { differInHttpRoutesAlone } from "../../push/http_routes_alone.ts";
import { VIRTUAL_SERVICE_HTTP } from "../../push/push_request.ts";
import { mayAffect } from "../generator.ts";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar, ingressGateway, shopGateway } from "./_test_envoy.ts";
import { envoyGenerators } from "./envoy_generators.ts";

const LDS = TYPE_URL.listener;
const listeners = envoyGenerators().find((g) => g.typeUrl === LDS)!;

/** Sidecars that read VirtualServices differently: by namespace, labels (`sourceLabels`), inbound ports. */
const SIDECARS: readonly Proxy[] = [
  envoySidecar("example", "10.0.2.1", { app: "ratings" }),
  envoySidecar("example", "10.9.9.9", { app: "client" }),
  envoySidecar("other", "10.9.9.8", { app: "client" }),
];

/** Hosts a VirtualService may claim: TCP, TLS, HTTP and wildcard services of the Envoy test mesh. */
const HOSTS = ["db.example.com", "api.example.com", "ratings", "*.example.com", "x.passthrough.example.com"];
/** Destinations its routes may send to. */
const DESTINATIONS = [
  { host: "db.example.com", port: { number: 5432 } },
  { host: "api.example.com", port: { number: 443 } },
  { host: "ratings", subset: "plain", port: { number: 8080 } },
];
const NAMES = ["one", "two", "three"];

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Spec = Record<string, unknown>;

function pick<T>(next: () => number, from: readonly T[]): T {
  return from[Math.floor(next() * from.length)];
}

function routes(next: () => number): Spec[] {
  const first = pick(next, DESTINATIONS);
  if (next() < 0.5) return [{ destination: first }];
  return [{ destination: first, weight: 70 }, { destination: pick(next, DESTINATIONS), weight: 30 }];
}

function httpRoutes(next: () => number): Spec[] {
  return [{
    ...(next() < 0.5 ? { match: [{ headers: { x: { exact: String(Math.floor(next() * 3)) } } }] } : {}),
    route: routes(next).map((r) => ({ ...r, destination: { host: "ratings" } })),
    ...(next() < 0.3 ? { mirror: { host: "ratings", subset: "plain" } } : {}),
    ...(next() < 0.3 ? { timeout: `${1 + Math.floor(next() * 3)}s` } : {}),
  }];
}

function tcpRoutes(next: () => number): Spec[] {
  return [{
    ...(next() < 0.3 ? { match: [{ sourceLabels: { app: pick(next, ["ratings", "client"]) } }] } : {}),
    route: routes(next),
  }];
}

function tlsRoutes(next: () => number): Spec[] {
  return [{ match: [{ sniHosts: [pick(next, HOSTS.filter((h) => h !== "ratings"))] }], route: routes(next) }];
}

/** A random VirtualService spec, every part optional. */
function randomSpec(next: () => number): Spec {
  return {
    hosts: [pick(next, HOSTS)],
    ...(next() < 0.2 ? { gateways: pick(next, [["shop"], ["mesh", "shop"]]) } : {}),
    ...(next() < 0.2 ? { exportTo: pick(next, [["."], ["other"]]) } : {}),
    ...(next() < 0.7 ? { http: httpRoutes(next) } : {}),
    ...(next() < 0.4 ? { tcp: tcpRoutes(next) } : {}),
    ...(next() < 0.3 ? { tls: tlsRoutes(next) } : {}),
  };
}

/** One random edit of `specs`: mostly new HTTP routes (the common case), else any part, or add or delete. */
function randomEdit(next: () => number, specs: Map<string, Spec>): void {
  const name = pick(next, NAMES);
  const spec = specs.get(name);
  const roll = next();
  if (spec === undefined || roll < 0.1) specs.set(name, randomSpec(next));
  else if (roll < 0.6) specs.set(name, { ...spec, http: httpRoutes(next) });
  else if (roll < 0.7) specs.set(name, { ...spec, tcp: tcpRoutes(next) });
  else if (roll < 0.8) specs.set(name, { ...spec, tls: tlsRoutes(next) });
  else if (roll < 0.85) specs.set(name, { ...spec, hosts: [pick(next, HOSTS)] });
  else if (roll < 0.9) specs.set(name, { ...spec, gateways: pick(next, [["shop"], ["mesh"]]) });
  else specs.delete(name);
}

/** A snapshot of the Envoy test mesh with the shop gateway and VirtualServices `specs` (in name order). */
function snapshot(specs: ReadonlyMap<string, Spec>): PushContext {
  const world = new World().apply(...envoyResources(), shopGateway());
  // Each VirtualService has the same creation time in every snapshot, whichever others exist.
  for (const [i, name] of NAMES.entries()) {
    const spec = specs.get(name);
    if (spec === undefined) continue;
    const vs: Resource = networking("VirtualService", "example", name, spec);
    world.apply({ ...vs, meta: { ...vs.meta, creationTimestamp: `2025-01-01T00:00:0${i}Z` } });
  }
  return world.push();
}

function listenerBytes(proxy: Proxy, push: PushContext): string {
  const { names, bytes } = run(listeners, proxy, push);
  return JSON.stringify(names.map((name) => [name, [...bytes.get(name)!]]));
}

Deno.test("Changing HTTP routes alone, as the snapshot comparison finds, never changes a sidecar's listeners", () => {
  let alone = 0, changed = 0;
  for (let seed = 1; seed <= 120; seed++) {
    const next = random(seed);
    const specs = new Map<string, Spec>();
    for (const name of NAMES) if (next() < 0.8) specs.set(name, randomSpec(next));
    const before = snapshot(specs);
    const edits = 1 + Math.floor(next() * 2);
    for (let i = 0; i < edits; i++) randomEdit(next, specs);
    const after = snapshot(specs);
    const httpAlone = differInHttpRoutesAlone(before.virtualServiceIndex, after.virtualServiceIndex);
    for (const proxy of SIDECARS) {
      const same = listenerBytes(proxy, before) === listenerBytes(proxy, after);
      if (!same) changed++;
      if (httpAlone) {
        assert.ok(same, `seed ${seed}: HTTP routes alone changed, yet the listeners of ${proxy.id} changed`);
      }
    }
    if (httpAlone) alone++;
  }
  assert.ok(alone >= 20, `enough edits change HTTP routes alone for the test to tell (${alone})`);
  assert.ok(changed >= 20, `and enough change listeners (${changed})`);
});

Deno.test("Changes to HTTP routes alone rebuild a sidecar's RDS but not its LDS, and every type of a gateway's they read", () => {
  const regenerated = (proxy: Proxy) =>
    envoyGenerators().filter((g) => mayAffect(g, proxy, new Set([VIRTUAL_SERVICE_HTTP]))).map((g) =>
      g.typeUrl
    );
  assert.deepEqual(regenerated(SIDECARS[0]), [TYPE_URL.route]);
  assert.deepEqual(regenerated(ingressGateway()), [TYPE_URL.cluster, LDS, TYPE_URL.route]);
});
