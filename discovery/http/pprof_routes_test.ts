import assert from "node:assert/strict";
import { Router } from "../../shared/http/router.ts";
import { serveHttp } from "../../shared/http/serve.ts";
import { silentLogger } from "../../shared/log/logger.ts";
import { DebugInterface } from "./debug_interface.ts";
import { InspectorProfiler, type Profiler, ProfilerUnavailableError } from "./inspector_profiler.ts";
import { addPprofRoutes } from "./pprof_routes.ts";

async function serve(profiler: Profiler) {
  const debug = addPprofRoutes(new DebugInterface(), profiler);
  const router = debug.mount(new Router());
  return await serveHttp("monitoring", { hostname: "127.0.0.1", port: 0 }, router.handle, silentLogger);
}

Deno.test("/debug/pprof/ takes CPU profiles and heap snapshots with V8's inspector", async (t) => {
  const server = await serve(new InspectorProfiler());
  try {
    await t.step("the index lists both profiles", async () => {
      const body = await (await fetch(`${server.url}/debug/pprof/`)).json();
      assert.deepEqual(body.profiles.map((p: { path: string }) => p.path), [
        "/debug/pprof/profile?seconds=N",
        "/debug/pprof/heap",
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
  };
  const server = await serve(unavailable);
  try {
    for (const path of ["/debug/pprof/profile?seconds=1", "/debug/pprof/heap"]) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 503);
      assert.match((await response.json()).error, /Cannot connect to the V8 inspector/);
    }
  } finally {
    await server.shutdown();
  }
});
