import assert from "node:assert/strict";
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import type { Resource } from "@mesh/shared/config/resource";
import type { AnalysisMessage } from "../analysis/analysis_message.ts";
import { ValidationMessagesSink } from "./validation_messages_sink.ts";
import type { StatusRef } from "./status_writer.ts";

/** A gate the test wins and loses by hand. */
function handGate(): DutyGate & { win(): void; lose(): void } {
  let run: ((signal: AbortSignal) => void) | undefined;
  let controller: AbortController | undefined;
  return {
    duty: "mesh-analyze-leader",
    leading: () => controller !== undefined && !controller.signal.aborted,
    whileLeading(r) {
      run = r;
      return () => controller?.abort();
    },
    win() {
      controller = new AbortController();
      run?.(controller.signal);
    },
    lose() {
      controller?.abort();
    },
  };
}

const message: AnalysisMessage = {
  code: "IST0101",
  type: "ReferencedResourceNotFound",
  level: "Error",
  text: 'Referenced gateway not found: "missing"',
  origin: { kind: "VirtualService", namespace: "shop", name: "web" },
} as AnalysisMessage;

function resource(kind: string, name: string, uid?: string): Resource {
  return {
    gvk: { group: "networking.mesh.io", version: "v1alpha3", kind },
    meta: { name, namespace: "shop", ...(uid ? { uid } : {}) },
    spec: {},
  };
}

Deno.test("ValidationMessagesSink writes messages of orchestrator resources while leading, clears them when they go", () => {
  const writes: Array<[string, unknown]> = [];
  const gate = handGate();
  const resources = new Map([
    ["VirtualService/shop/web", resource("VirtualService", "web", "u1")],
    ["VirtualService/shop/file", resource("VirtualService", "file")],
  ]);
  const sink = new ValidationMessagesSink({
    writer: {
      writeField: (ref: StatusRef, _field, value) => writes.push([`${ref.plural}/${ref.name}`, value]),
    },
    gate,
    resource: (key) => resources.get(key),
  });
  const run = new Map([["VirtualService/shop/web", [message]], ["VirtualService/shop/file", [message]]]);
  sink.publish(run);
  assert.deepEqual(writes, [], "nothing is written before the duty is won");
  gate.win();
  sink.publish(run);
  assert.deepEqual(writes, [[
    "virtualservices/web",
    [{ type: { name: "ReferencedResourceNotFound", code: "IST0101" }, level: "ERROR" }],
  ]]);
  sink.publish(run);
  assert.equal(writes.length, 1, "an unchanged result is not written again");
  sink.publish(new Map());
  assert.deepEqual(writes[1], ["virtualservices/web", undefined]);
  gate.lose();
  sink.publish(run);
  assert.equal(writes.length, 2, "nothing is written after the duty is lost");
});

Deno.test("ValidationMessagesSink writes the last run's messages when it wins the duty, without waiting for a change", () => {
  const writes: string[] = [];
  const gate = handGate();
  const sink = new ValidationMessagesSink({
    writer: { writeField: (ref: StatusRef) => writes.push(`${ref.plural}/${ref.name}`) },
    gate,
    resource: (key) =>
      key === "VirtualService/shop/web" ? resource("VirtualService", "web", "u1") : undefined,
  });
  sink.publish(new Map([["VirtualService/shop/web", [message]]]));
  assert.deepEqual(writes, []);
  gate.win();
  assert.deepEqual(writes, ["virtualservices/web"], "the run before the election is written on winning");
  gate.lose();
  gate.win();
  assert.deepEqual(
    writes,
    ["virtualservices/web", "virtualservices/web"],
    "and again by a replica that wins back",
  );
});
