import assert from "node:assert/strict";
import { HttpError, jsonResponse, Router } from "./router.ts";

Deno.test("Router dispatches exact paths and answers errors as JSON", async (t) => {
  const router = new Router()
    .add("/ready", "Readiness", () => new Response("ok"))
    .add("/debug/fail", "Fails", () => {
      throw new HttpError(400, "proxyID is required");
    })
    .add("/debug/crash", "Crashes", () => {
      throw new Error("boom");
    })
    .add("/debug/pprof/", "Profiles", (_r, url) => jsonResponse({ rest: url.pathname }));
  const call = (path: string, method = "GET") => router.handle(new Request(`http://x${path}`, { method }));
  await t.step("a known path", async () => assert.equal(await (await call("/ready")).text(), "ok"));
  await t.step("an unknown path is 404 JSON", async () => {
    const res = await call("/nope");
    assert.equal(res.status, 404);
    assert.match((await res.json()).error, /No handler for path "\/nope"/);
  });
  await t.step("a wrong method is 405", async () => assert.equal((await call("/ready", "POST")).status, 405));
  await t.step("an HttpError keeps its status", async () => {
    const res = await call("/debug/fail");
    assert.deepEqual([res.status, (await res.json()).error], [400, "proxyID is required"]);
  });
  await t.step("any other error is 500 with the message", async () => {
    const res = await call("/debug/crash");
    assert.equal(res.status, 500);
    assert.match((await res.json()).error, /boom/);
  });
  await t.step("a prefix route matches below it", async () => {
    assert.deepEqual(await (await call("/debug/pprof/heap")).json(), { rest: "/debug/pprof/heap" });
  });
  await t.step("registering a path twice is refused", () => {
    assert.throws(() => router.add("/ready", "again", () => new Response()), /twice/);
  });
});
