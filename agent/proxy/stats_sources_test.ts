import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { httpStatsSource, registryStatsSource } from "./stats_sources.ts";

const limits = (maxBytes = 1024) => ({ signal: new AbortController().signal, maxBytes });

Deno.test("httpStatsSource reads an exposition over HTTP within its limits", async (t) => {
  let answer = () => new Response("up 1\n");
  let accept: string | null = null;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    accept = request.headers.get("accept");
    return answer();
  });
  const url = `http://127.0.0.1:${server.addr.port}/metrics`;
  try {
    await t.step("a 200 answer is the exposition; the classic text format is asked for", async () => {
      assert.equal(await httpStatsSource("application", url).read(limits()), "up 1\n");
      assert.match(accept ?? "", /^text\/plain;version=0\.0\.4/);
    });

    await t.step("any other status is a failure naming the URL and status", async () => {
      answer = () => new Response("secret detail", { status: 500 });
      await assert.rejects(httpStatsSource("application", url).read(limits()), {
        message: `${url} answered HTTP 500`,
      });
    });

    await t.step("a body larger than the cap is cut off and fails", async () => {
      answer = () => new Response("x".repeat(4096));
      await assert.rejects(httpStatsSource("application", url).read(limits(1000)), {
        message: `${url} sent more than the 1000 bytes allowed`,
      });
    });

    await t.step("a body of exactly the cap is accepted", async () => {
      answer = () => new Response("x".repeat(1000));
      assert.equal((await httpStatsSource("application", url).read(limits(1000))).length, 1000);
    });

    await t.step("an aborted signal stops the read", async () => {
      const release = Promise.withResolvers<void>();
      answer = () =>
        new Response(new ReadableStream({ start: async (c) => (await release.promise, c.close()) }));
      const controller = new AbortController();
      const reading = httpStatsSource("application", url).read({ signal: controller.signal, maxBytes: 1024 });
      controller.abort(new Error("too slow"));
      await assert.rejects(reading);
      release.resolve();
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("registryStatsSource renders this process's metrics, within the cap", async () => {
  const metrics = new Metrics("agent", { version: "1.0.0", tag: "1.0.0" });
  assert.match(await registryStatsSource("agent", metrics).read(limits(1024 * 1024)), /^mesh_build\{/m);
  await assert.rejects(registryStatsSource("agent", metrics).read(limits(10)), /more than the 10 allowed/);
});
