import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { Router } from "@mesh/shared/http/router";
import { DebugInterface } from "./debug_interface.ts";
import { addReadyRoute, Readiness, syncedCheck } from "./readiness.ts";

Deno.test("Readiness reports every unmet check and resolves whenReady once all pass", async () => {
  const clock = FakeTimers.install();
  try {
    let synced = false;
    const readiness = new Readiness([
      syncedCheck("config", () => synced, () => "not loaded"),
      {
        name: "broken",
        check: () => {
          throw new Error("boom");
        },
      },
    ]);
    assert.deepEqual(readiness.status(), {
      ready: false,
      reasons: ["config: not loaded", "broken: check failed: boom"],
    });
    const readiness2 = new Readiness([syncedCheck("config", () => synced, () => "not loaded")]);
    let resolved = false;
    const waiting = readiness2.whenReady(100).then(() => resolved = true);
    await clock.tickAsync(500);
    assert.equal(resolved, false);
    synced = true;
    await clock.tickAsync(100);
    await waiting;
    assert.equal(resolved, true);
    const aborted = new AbortController();
    const never = new Readiness([{ name: "x", check: () => "never" }]).whenReady(100, aborted.signal);
    aborted.abort(new Error("stopped"));
    await assert.rejects(never, /stopped/);
  } finally {
    clock.uninstall();
  }
});

Deno.test("/ready answers through a router without a socket", async () => {
  const router = addReadyRoute(new Router(), new Readiness());
  const response = await router.handle(new Request("http://x/ready"));
  assert.deepEqual([response.status, await response.json()], [200, { ready: true }]);
});

Deno.test("DebugInterface accepts only /debug/ paths", () => {
  assert.throws(
    () => new DebugInterface().add("/adsz", "x", () => new Response()),
    /must start with "\/debug\/"/,
  );
});
