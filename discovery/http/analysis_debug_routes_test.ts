import assert from "node:assert/strict";
import { DebugInterface } from "./debug_interface.ts";
import { addAnalysisDebugRoutes } from "./analysis_debug_routes.ts";
import { MemoryAnalysisSink } from "../analysis/analysis_sink.ts";
import { MESSAGES, newMessage } from "../analysis/analysis_message.ts";

async function get(debug: DebugInterface): Promise<Record<string, unknown>> {
  return await (await debug.router.handle(new Request("http://127.0.0.1/debug/analyzez"))).json();
}

Deno.test("/debug/analyzez says analysis is off when DISCOVERY_ENABLE_ANALYSIS is not set", async () => {
  const debug = addAnalysisDebugRoutes(new DebugInterface(), { analyzers: [] });
  assert.deepEqual(await get(debug), { enabled: false, analyzers: [] });
});

Deno.test("/debug/analyzez serves the last published messages by resource, and the analyzers that run", async () => {
  const sink = new MemoryAnalysisSink(() => new Date("2026-11-27T20:00:00Z"));
  const origin = { kind: "VirtualService", namespace: "default", name: "shop" };
  const message = newMessage(MESSAGES.ReferencedResourceNotFound, origin, "gateway", "shop-gateway");
  sink.publish(new Map([["VirtualService/default/shop", [message]]]));
  const debug = addAnalysisDebugRoutes(new DebugInterface(), {
    analyzers: ["virtualservice.GatewayAnalyzer"],
    view: () => sink.view(),
  });
  assert.deepEqual(await get(debug), {
    enabled: true,
    analyzers: ["virtualservice.GatewayAnalyzer"],
    runs: 1,
    publishedAt: "2026-11-27T20:00:00.000Z",
    resources: { "VirtualService/default/shop": [JSON.parse(JSON.stringify(message))] },
  });
  sink.publish(new Map());
  assert.deepEqual((await get(debug)).resources, {}, "a resource absent from the next run has no messages");
});
