import assert from "node:assert/strict";
import { jsonResponse, Router } from "@mesh/shared/http/router";
import { DebugInterface, MAX_DEBUG_RESPONSES } from "./debug_interface.ts";

Deno.test("Past four debug answers being built or sent, a debug request is answered 503 and counted", async () => {
  let refused = 0;
  const debug = new DebugInterface({ refused: () => refused++ });
  debug.add("/debug/registryz", "Every service", () => jsonResponse({ services: "x".repeat(256 * 1024) }));
  const outer = debug.mount(new Router());
  const get = (path: string) => outer.handle(new Request(`http://127.0.0.1:8080${path}`));
  // Answers whose clients have not read them: each keeps its body until read or cancelled.
  const unread = await Promise.all(
    Array.from({ length: MAX_DEBUG_RESPONSES }, () => get("/debug/registryz")),
  );
  assert.deepEqual(unread.map((r) => r.status), Array(MAX_DEBUG_RESPONSES).fill(200));
  const busy = await get("/debug/registryz");
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get("retry-after"), "1");
  assert.equal(await busy.text(), "4 debug answers are being built or sent; retry\n");
  assert.equal(refused, 1);
  assert.equal((await get("/debug")).status, 200, "the index is not a debug answer of the bound");

  await unread[0].body!.cancel();
  const next = await get("/debug/registryz");
  assert.equal(next.status, 200, "a cancelled answer gives its place");
  assert.equal((await next.json()).services.length, 256 * 1024, "and the body passes whole");
  const afterRead = await get("/debug/nothing");
  assert.equal(afterRead.status, 404, "so does one read to its end");
  await afterRead.body?.cancel();
  for (const response of unread.slice(1)) await response.body!.cancel();
  assert.equal(refused, 1);
});
