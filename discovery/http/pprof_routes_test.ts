import assert from "node:assert/strict";
import { Router } from "@mesh/shared/http/router";
import { serveHttp } from "@mesh/shared/http/serve";
import { silentLogger } from "@mesh/shared/log/logger";
import { DebugInterface } from "./debug_interface.ts";
import {
  InspectorProfiler,
  type Profiler,
  ProfilerUnavailableError,
  type ProfileWindow,
} from "./inspector_profiler.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { addPprofRoutes } from "./pprof_routes.ts";
import { waitFor } from "@mesh/shared/testing/wait_for";

const MARKERS = 100_000;

/** Allocates ~13 MiB of small arrays that stay alive. */
function keepMarkers(): number[][] {
  const kept: number[][] = [];
  for (let i = 0; i < MARKERS; i++) kept.push([i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7]);
  return kept;
}

/** Allocates ~35 MiB of small arrays, each dead as soon as the next is made. */
function dropMarkers(): number {
  let sum = 0;
  for (let i = 0; i < 4 * MARKERS; i++) {
    const garbage = [i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7];
    sum += garbage[i % 8];
  }
  return sum;
}

interface ProfileNode {
  readonly callFrame: { readonly functionName: string };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

/** Sampled bytes by the function that allocated them, from a `.heapprofile` tree. */
function bytesByFunction(node: ProfileNode, into = new Map<string, number>()): Map<string, number> {
  const name = node.callFrame.functionName;
  if (node.selfSize > 0) into.set(name, (into.get(name) ?? 0) + node.selfSize);
  for (const child of node.children) bytesByFunction(child, into);
  return into;
}

/** Profile windows of the runtime's length, unless a step gates the next one to open and close it itself. */
class Windows {
  #gate?: { opened: PromiseWithResolvers<void>; closed: PromiseWithResolvers<void> };

  /** The next profile samples until `close()`; `opened` resolves once its sampling runs. */
  gateNext(): { opened: Promise<void>; close: () => void } {
    const gate = { opened: Promise.withResolvers<void>(), closed: Promise.withResolvers<void>() };
    this.#gate = gate;
    return { opened: gate.opened.promise, close: () => gate.closed.resolve() };
  }

  readonly window: ProfileWindow = (ms, signal) => {
    const gate = this.#gate;
    this.#gate = undefined;
    if (gate === undefined) return sleep(ms, undefined, { signal });
    gate.opened.resolve();
    return gate.closed.promise;
  };
}

/** The status `url` answers with, its body dropped. */
async function statusOf(url: string): Promise<number> {
  const response = await fetch(url);
  await response.body?.cancel();
  return response.status;
}

async function serve(profiler: Profiler) {
  const debug = addPprofRoutes(new DebugInterface(), profiler);
  const router = debug.mount(new Router());
  return await serveHttp("monitoring", { hostname: "127.0.0.1", port: 0 }, router.handle, silentLogger);
}

Deno.test("/debug/pprof/ takes CPU profiles and heap snapshots with V8's inspector", async (t) => {
  const windows = new Windows();
  const server = await serve(new InspectorProfiler({ window: windows.window }));
  try {
    await t.step("the index lists every profile", async () => {
      const body = await (await fetch(`${server.url}/debug/pprof/`)).json();
      assert.deepEqual(body.profiles.map((p: { path: string }) => p.path), [
        "/debug/pprof/profile?seconds=N",
        "/debug/pprof/heap",
        "/debug/pprof/allocs?seconds=N&promoted=true",
      ]);
      const unknown = await fetch(`${server.url}/debug/pprof/goroutine`);
      assert.equal(unknown.status, 404);
      await unknown.body?.cancel();
    });

    await t.step("profile?seconds=N downloads a .cpuprofile", async () => {
      const response = await fetch(`${server.url}/debug/pprof/profile?seconds=0.2`);
      assert.equal(response.status, 200);
      assert.match(
        response.headers.get("content-disposition")!,
        /^attachment; filename="mesh-discovery-.*\.cpuprofile"$/,
      );
      const profile = await response.json();
      assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0);
      assert.ok(profile.endTime >= profile.startTime);
    });

    await t.step("heap downloads a .heapsnapshot", async () => {
      const response = await fetch(`${server.url}/debug/pprof/heap`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-disposition")!, /\.heapsnapshot"$/);
      const snapshot = await response.json();
      assert.ok(snapshot.snapshot.node_count > 0);
      assert.ok(Array.isArray(snapshot.strings));
    });

    await t.step("allocs?seconds=N downloads a .heapprofile of what was allocated meanwhile", async () => {
      const window = windows.gateNext();
      const pending = fetch(`${server.url}/debug/pprof/allocs?seconds=0.5`);
      await window.opened;
      const kept = keepMarkers();
      window.close();
      const response = await pending;
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-disposition")!, /\.heapprofile"$/);
      const profile = await response.json();
      assert.ok(Array.isArray(profile.samples) && profile.samples.length > 0);
      assert.ok((bytesByFunction(profile.head).get("keepMarkers") ?? 0) > 0);
      assert.equal(kept.length, MARKERS);
    });

    await t.step("allocs with promoted=true leaves out what died young", async () => {
      const window = windows.gateNext();
      const pending = fetch(`${server.url}/debug/pprof/allocs?seconds=1&promoted=true`);
      await window.opened;
      dropMarkers();
      // Kept allocations after the garbage force young-generation collections, which take it out of the profile;
      // whatever is still in the young generation when sampling stops stays in it.
      const kept = [keepMarkers(), keepMarkers(), keepMarkers()];
      window.close();
      const bytes = bytesByFunction((await (await pending).json()).head);
      assert.ok((bytes.get("keepMarkers") ?? 0) > 0, "objects kept across collections are sampled");
      assert.ok(
        (bytes.get("dropMarkers") ?? 0) < (bytes.get("keepMarkers") ?? 0) / 4,
        `objects that died young are mostly left out: ${JSON.stringify([...bytes])}`,
      );
      assert.equal(kept.length, 3);
      const bad = await fetch(`${server.url}/debug/pprof/allocs?seconds=1&promoted=yes`);
      assert.equal(bad.status, 400);
      assert.match((await bad.json()).error, /^Invalid promoted "yes": expected true or false$/);
    });

    await t.step("a client that leaves ends its profile, so the next one is taken at once", async () => {
      for (const kind of ["profile", "allocs"]) {
        const leaving = new AbortController();
        const pending = fetch(`${server.url}/debug/pprof/${kind}?seconds=600`, { signal: leaving.signal });
        const second = `${server.url}/debug/pprof/${kind}?seconds=0.1`;
        // While the first profile runs, a second one is refused as busy.
        await waitFor(
          async () => await statusOf(second) === 503,
          `${kind}: a second profile refused`,
          5_000,
          20,
        );
        leaving.abort();
        await pending.catch(() => {});
        await waitFor(
          async () => await statusOf(second) === 200,
          `${kind}: the profiler free once the first client left`,
          5_000,
          20,
        );
      }
    });

    await t.step("a bad duration is a 400 with the expected range", async () => {
      const response = await fetch(`${server.url}/debug/pprof/profile?seconds=9999`);
      assert.equal(response.status, 400);
      assert.match(
        (await response.json()).error,
        /^Invalid seconds "9999": expected a number in \(0, 600\]$/,
      );
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("/debug/pprof/ answers 503 with the reason when profiling is unavailable", async () => {
  const unavailable: Profiler = {
    cpuProfile: () =>
      Promise.reject(new ProfilerUnavailableError("Cannot connect to the V8 inspector: denied")),
    heapSnapshot: () =>
      Promise.reject(new ProfilerUnavailableError("Cannot connect to the V8 inspector: denied")),
    allocationProfile: () =>
      Promise.reject(new ProfilerUnavailableError("Cannot connect to the V8 inspector: denied")),
  };
  const server = await serve(unavailable);
  try {
    for (
      const path of ["/debug/pprof/profile?seconds=1", "/debug/pprof/heap", "/debug/pprof/allocs?seconds=1"]
    ) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 503);
      assert.match((await response.json()).error, /Cannot connect to the V8 inspector/);
    }
  } finally {
    await server.shutdown();
  }
});
