import assert from "node:assert/strict";
import { Router } from "@mesh/shared/http/router";
import { LogManager } from "@mesh/shared/log/log_manager";
import type { LogSink } from "@mesh/shared/log/sinks";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { buildInfo } from "@mesh/shared/version/build_info";
import type { ReadNativeHeap } from "@mesh/shared/process/native_heap_figures";
import { addCtrlzRoutes } from "./ctrlz_routes.ts";

const lines: string[] = [];
const sink: LogSink = { write: (l) => void lines.push(l), close() {} };

function setup(nativeHeap?: ReadNativeHeap) {
  const logs = new LogManager(["ads", "all", "default"], {
    log_as_json: true,
    log_caller: "",
    log_output_level: "default:info",
    log_rotate: "",
    log_rotate_max_age: 0,
    log_rotate_max_backups: 0,
    log_rotate_max_size: 0,
    log_stacktrace_level: "default:none",
    log_target: [],
  }, { sinks: [sink] });
  const router = addCtrlzRoutes(new Router(), {
    logs,
    env: new EnvSettings("discovery", { DISCOVERY_PUSH_THROTTLE: "7" }),
    info: buildInfo("abc"),
    args: ["discovery", "--registries", "Mock"],
    startedAt: new Date(),
    ...(nativeHeap && { nativeHeap }),
  });
  const call = (path: string, init?: RequestInit) => router.handle(new Request(`http://ctrlz${path}`, init));
  return { logs, call };
}

Deno.test("ControlZ lists scopes and changes a scope's levels while running", async (t) => {
  const { logs, call } = setup();
  await t.step("GET /scopej/ lists every scope", async () => {
    const scopes = await (await call("/scopej/")).json();
    assert.deepEqual(scopes.map((s: { name: string }) => s.name), ["ads", "default"]);
    assert.equal(scopes[0].output_level, "info");
  });
  await t.step("PUT /scopej/ads sets debug, and debug lines appear", async () => {
    lines.length = 0;
    logs.scope("ads").debug("hidden");
    const res = await call("/scopej/ads", {
      method: "PUT",
      body: JSON.stringify({ output_level: "debug", log_callers: true }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      name: "ads",
      output_level: "debug",
      stack_trace_level: "none",
      log_callers: true,
    });
    logs.scope("ads").debug("shown");
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]).msg, "shown");
    assert.ok(JSON.parse(lines[0]).caller);
  });
  await t.step("bad levels and unknown scopes are refused", async () => {
    const bad = await call("/scopej/ads", { method: "PUT", body: JSON.stringify({ output_level: "loud" }) });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /Invalid output_level "loud"/);
    assert.equal((await call("/scopej/nope")).status, 404);
    assert.equal((await call("/scopej/ads", { method: "PUT", body: "{" })).status, 400);
  });
  await t.step("a body over 64 KiB is 413 and no reply carries the input back", async () => {
    const big = JSON.stringify({ output_level: "x".repeat(1024 * 1024) });
    const tooBig = await call("/scopej/ads", { method: "PUT", body: big });
    assert.equal(tooBig.status, 413);
    assert.ok((await tooBig.text()).length < 200);
    const long = JSON.stringify({ output_level: "<script>".repeat(100) });
    const refused = await call("/scopej/ads", { method: "PUT", body: long });
    const { error } = await refused.json();
    assert.equal(refused.status, 400);
    assert.ok(!error.includes("<script>"), error);
    const notJson = await call("/scopej/ads", { method: "PUT", body: "{secret-token" });
    assert.ok(!(await notJson.text()).includes("secret-token"));
  });
});

Deno.test("ControlZ describes the process, environment, arguments and version", async () => {
  const { call } = setup();
  assert.equal((await (await call("/procj/")).json()).pid, Deno.pid);
  assert.ok((await (await call("/memj/")).json()).rss > 0);
  const env = await (await call("/envj/")).json();
  assert.deepEqual(env.find((e: { name: string }) => e.name === "DISCOVERY_PUSH_THROTTLE").value, "7");
  assert.deepEqual(await (await call("/argsj/")).json(), ["discovery", "--registries", "Mock"]);
  assert.equal((await (await call("/versionj/")).json()).revision, "abc");
  assert.match(await (await call("/")).text(), /<a href="\/scopej\/">/);
});

Deno.test("ControlZ refuses a level change a browser sends for a page of another origin", async (t) => {
  const { logs, call } = setup();
  const put = (headers: Record<string, string>) =>
    call("/scopej/ads", { method: "PUT", headers, body: JSON.stringify({ output_level: "error" }) });
  await t.step("Sec-Fetch-Site cross-site or same-site: 403, level unchanged", async () => {
    for (const site of ["cross-site", "same-site"]) {
      const refused = await put({ "sec-fetch-site": site });
      assert.equal(refused.status, 403);
      assert.match(
        (await refused.json()).error,
        /Refused a .* request: changes are accepted only from this server/,
      );
    }
    assert.equal(logs.levels().find((s) => s.scope === "ads")!.outputLevel, "info");
  });
  await t.step("an Origin other than the server's own, or opaque: 403", async () => {
    for (const origin of ["http://evil.example", "http://ctrlz:9999", "null"]) {
      const refused = await put({ origin });
      assert.equal(refused.status, 403, origin);
      await refused.body?.cancel();
    }
    assert.equal(logs.levels().find((s) => s.scope === "ads")!.outputLevel, "info");
  });
  await t.step("the server's own page, and a program sending neither header, may change it", async () => {
    const own = await put({ origin: "http://ctrlz", "sec-fetch-site": "same-origin" });
    assert.equal(own.status, 200);
    await own.body?.cancel();
    const curl = await call("/scopej/ads", { method: "PUT", body: JSON.stringify({ output_level: "warn" }) });
    assert.equal((await curl.json()).output_level, "warn");
  });
});

Deno.test("ControlZ pages come with a strict Content-Security-Policy and load only this server's files", async () => {
  const { call } = setup();
  for (const path of ["/", "/scopez/", "/memz/", "/procz/", "/envz/", "/argsz/", "/metricz/", "/versionz/"]) {
    const page = await call(path);
    assert.equal(page.status, 200, path);
    assert.match(page.headers.get("content-type")!, /^text\/html/);
    const policy = page.headers.get("content-security-policy")!;
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.match(policy, /default-src 'none'/);
    const text = await page.text();
    assert.doesNotMatch(text, /<script>|<style|style="|https?:\/\//, path);
  }
  const script = await call("/static/ctrlz.js");
  assert.match(script.headers.get("content-type")!, /javascript/);
  assert.match(await script.text(), /scopej/);
  const unknown = await call("/no-such-page");
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
});

Deno.test("ControlZ shows glibc's arenas beside V8's figures, and V8's alone when they cannot be read", async () => {
  const arenas = [
    { arena: 0, systemBytes: 900, freeBytes: 300, inUseBytes: 600 },
    { arena: 1, systemBytes: 200, freeBytes: 150, inUseBytes: 50 },
  ];
  const { call } = setup(() => ({ arenas, mmappedChunks: 2, mmappedBytes: 4000 }));
  const memory = await (await call("/memj/")).json();
  assert.ok(memory.rss > 0 && memory.heapUsed > 0);
  assert.deepEqual(
    [memory.nativeInUse, memory.nativeFree, memory.mainArenaInUse, memory.mainArenaFree],
    [4650, 450, 600, 300],
  );
  const page = await (await call("/memz/")).text();
  assert.match(page, /Main arena free, kept/);
  const v8Only = await (await call("/memj/?native=false")).json();
  assert.ok(v8Only.rss > 0);
  assert.equal(
    v8Only.nativeInUse,
    undefined,
    "a sampler that asks for V8's figures alone does not walk the arenas",
  );
  const wrong = await call("/memj/?native=no");
  assert.equal(wrong.status, 400);
  assert.equal((await wrong.json()).error, 'Invalid native "no": expected true or false');
  const failing = setup(() => {
    throw new Error("malloc_info failed with -1");
  });
  const alone = await (await failing.call("/memj/")).json();
  assert.ok(alone.rss > 0);
  assert.equal(alone.nativeInUse, undefined);
});
