import assert from "node:assert/strict";
import { Router } from "@mesh/shared/http/router";
import { MemoryConfigStore } from "../config/memory_config_store.ts";
import { PushHistory } from "../push/push_history.ts";
import { DebugInterface, SENSITIVE_DEBUG_PATHS } from "./debug_interface.ts";
import { addDebugOverview } from "./debug_overview_routes.ts";

Deno.test("/debug/overview is a page with a strict policy, its stylesheet served by the debug interface", async () => {
  const debug = new DebugInterface();
  let now = 0;
  const pushes = new PushHistory({ now: () => now });
  pushes.record(0.01);
  now = 20_000;
  addDebugOverview(debug, {
    proxies: () => [],
    latestPush: () => "v1",
    store: new MemoryConfigStore(),
    rejected: () => [{ file: "/cfg/a.yaml", line: 2, errors: ["/cfg/a.yaml:2: spec: <bad>"] }],
    pushes,
  });
  const outer = debug.mount(new Router());
  const page = await outer.handle(new Request("http://debug/debug/overview"));
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-security-policy")!, /default-src 'none'/);
  const text = await page.text();
  assert.match(text, /<link rel="stylesheet" href="\/debug\/static\/mesh.css">/);
  assert.match(text, /spec: &lt;bad&gt;/);
  assert.match(text, /1 proxy push \(/);
  const css = await outer.handle(new Request("http://debug/debug/static/mesh.css"));
  assert.match(css.headers.get("content-type")!, /^text\/css/);
  await css.body?.cancel();
  const index = await (await outer.handle(new Request("http://debug/debug"))).json();
  assert.ok(index.paths.some((p: { path: string }) => p.path === "/debug/overview"));
});

Deno.test("/debug/overview answers loopback callers only by default, as /debug/configz whose data it shows", () => {
  assert.ok(SENSITIVE_DEBUG_PATHS.includes("/debug/overview"));
  assert.ok(SENSITIVE_DEBUG_PATHS.includes("/debug/configz"));
});
