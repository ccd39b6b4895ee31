import assert from "node:assert/strict";
import type { Component } from "./component.ts";
import { closingComponent } from "./closing_component.ts";
import { ComponentStartError, Lifecycle } from "./lifecycle.ts";

/** A component that writes `start name`/`stop name` to `events`. */
function recorded(name: string, events: string[], extra: Partial<Component> = {}): Component {
  return {
    name,
    start: () => void events.push(`start ${name}`),
    stop: () => void events.push(`stop ${name}`),
    ...extra,
  };
}

Deno.test("Lifecycle starts components in list order and stops them in reverse", async () => {
  const events: string[] = [];
  const lifecycle = new Lifecycle(["a", "b", "c"].map((n) => recorded(n, events)));
  await lifecycle.start();
  await lifecycle.stop();
  assert.deepEqual(events, ["start a", "start b", "start c", "stop c", "stop b", "stop a"]);
});

Deno.test("Lifecycle waits for an asynchronous start before starting the next component", async () => {
  const events: string[] = [];
  const slow = recorded("slow", events, {
    start: async () => {
      await Promise.resolve();
      events.push("start slow");
    },
  });
  await new Lifecycle([slow, recorded("next", events)]).start();
  assert.deepEqual(events, ["start slow", "start next"]);
});

Deno.test("A failing start stops what started, in reverse, and rethrows naming the component with cause", async () => {
  const events: string[] = [];
  const failure = new TypeError("Port 80 is taken");
  const lifecycle = new Lifecycle([
    recorded("a", events),
    recorded("b", events),
    recorded("broken", events, {
      start: () => {
        throw failure;
      },
    }),
    recorded("never", events),
  ]);
  await assert.rejects(lifecycle.start(), (error: unknown) => {
    assert.ok(error instanceof ComponentStartError);
    assert.equal(error.component, "broken");
    assert.equal(error.cause, failure);
    assert.equal(error.message, "Port 80 is taken");
    return true;
  });
  assert.deepEqual(events, ["start a", "start b", "stop b", "stop a"]);
});

Deno.test("Lifecycle stops every component even when one stop fails, and reports the failures", async () => {
  const events: string[] = [];
  const lifecycle = new Lifecycle([
    recorded("a", events),
    recorded("b", events, {
      stop: () => {
        throw new Error("Stuck");
      },
    }),
    recorded("c", events),
  ]);
  await lifecycle.start();
  await assert.rejects(lifecycle.stop(), AggregateError);
  assert.deepEqual(events, ["start a", "start b", "start c", "stop c", "stop a"]);
});

Deno.test("Readiness names every component not started yet and every started one that says why not", async () => {
  let synced = false;
  const gate = Promise.withResolvers<void>();
  const lifecycle = new Lifecycle([
    recorded("config", [], { ready: () => synced ? undefined : "config sources have not loaded yet" }),
    recorded("listener", [], { start: () => gate.promise }),
    recorded("last listener", []),
  ]);
  assert.deepEqual(lifecycle.notReady().map((n) => n.name), ["config", "listener", "last listener"]);
  const started = lifecycle.start();
  await Promise.resolve();
  assert.deepEqual(lifecycle.notReady(), [
    { name: "config", reason: "config sources have not loaded yet" },
    { name: "listener", reason: "not started yet" },
    { name: "last listener", reason: "not started yet" },
  ]);
  gate.resolve();
  await started;
  assert.deepEqual(lifecycle.notReady(), [{ name: "config", reason: "config sources have not loaded yet" }]);
  synced = true;
  assert.deepEqual(lifecycle.notReady(), []);
  assert.deepEqual(lifecycle.checks().map((c) => c.name), ["config", "listener", "last listener"]);
});

Deno.test("Lifecycle refuses two components of one name", () => {
  assert.throws(() => new Lifecycle([recorded("a", []), recorded("a", [])]), /listed twice/);
});

Deno.test("A closing component runs the closers its start returned in reverse order", async () => {
  const events: string[] = [];
  const lifecycle = new Lifecycle([
    closingComponent("pipeline", () => {
      events.push("build");
      return [() => void events.push("close pipeline"), () => void events.push("unsubscribe")];
    }),
  ]);
  await lifecycle.start();
  await lifecycle.stop();
  assert.deepEqual(events, ["build", "unsubscribe", "close pipeline"]);
});
