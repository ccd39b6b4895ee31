import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { type DebounceOptions, PushDebouncer } from "./push_debouncer.ts";
import type { Timers } from "@mesh/shared/time/timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { type PushRequest, pushRequest } from "./push_request.ts";

const OPTIONS: DebounceOptions = { afterMs: 100, maxMs: 1_000, enableEdsDebounce: true };
const config = (name: string) => pushRequest(true, "config", [`VirtualService/ns/${name}`], Date.now());
const eds = (host: string) => pushRequest(false, "endpoint", [`ServiceEntry/ns/${host}`], Date.now());
const names = (r: PushRequest) => [...r.configsUpdated ?? []].map((k) => k.split("/")[2]).sort().join(",");

function withClock(
  fn: (clock: FakeTimers.InstalledClock, timers: Timers) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const clock = FakeTimers.install({ now: 1_000_000 });
    try {
      await fn(clock, timersOf(clock));
    } finally {
      clock.uninstall();
    }
  };
}

Deno.test(
  "PushDebouncer merges updates inside the quiet period",
  withClock(async (clock, timers) => {
    const pushed: string[] = [];
    const debouncer = new PushDebouncer((r) => void pushed.push(names(r)), OPTIONS, { timers });
    debouncer.enqueue(config("a"));
    debouncer.enqueue(config("b"));
    await clock.tickAsync(50);
    debouncer.enqueue(config("c"));
    await clock.tickAsync(99);
    assert.deepEqual(pushed, [], "the quiet period restarts with each update");
    await clock.tickAsync(1);
    assert.deepEqual(pushed, ["a,b,c"]);
    debouncer.enqueue(config("d"));
    await clock.tickAsync(100);
    assert.deepEqual(pushed, ["a,b,c", "d"]);
    debouncer.close();
  }),
);

Deno.test(
  "PushDebouncer forces a push after the maximum delay while updates keep coming",
  withClock(async (clock, timers) => {
    const pushedAt: number[] = [];
    const start = Date.now();
    const debouncer = new PushDebouncer(() => void pushedAt.push(Date.now() - start), OPTIONS, { timers });
    for (let i = 0; i < 30; i++) {
      debouncer.enqueue(config(`c${i}`));
      await clock.tickAsync(50);
    }
    assert.deepEqual(pushedAt, [1_000]);
    debouncer.close();
  }),
);

Deno.test(
  "PushDebouncer pushes endpoint-only requests at once when EDS debounce is off",
  withClock(async (clock, timers) => {
    const pushed: string[] = [];
    const debouncer = new PushDebouncer(
      (r) => void pushed.push(`${r.full ? "full" : "eds"}:${names(r)}`),
      { ...OPTIONS, enableEdsDebounce: false },
      { timers },
    );
    debouncer.enqueue(config("a"));
    debouncer.enqueue(eds("svc"));
    await clock.tickAsync(0);
    assert.deepEqual(pushed, ["eds:svc"]);
    await clock.tickAsync(100);
    assert.deepEqual(pushed, ["eds:svc", "full:a"]);
    debouncer.close();
  }),
);

Deno.test(
  "PushDebouncer merges endpoint-only requests when EDS debounce is on",
  withClock(async (clock, timers) => {
    const pushed: string[] = [];
    const debouncer = new PushDebouncer(
      (r) => void pushed.push(`${r.full ? "full" : "eds"}:${names(r)}`),
      OPTIONS,
      { timers },
    );
    debouncer.enqueue(eds("x"));
    debouncer.enqueue(eds("y"));
    await clock.tickAsync(0);
    assert.deepEqual(pushed, []);
    await clock.tickAsync(100);
    assert.deepEqual(pushed, ["eds:x,y"]);
    debouncer.close();
  }),
);

Deno.test(
  "PushDebouncer holds the next push until the running one finishes",
  withClock(async (clock, timers) => {
    const pushed: string[] = [];
    const finish: (() => void)[] = [];
    const debouncer = new PushDebouncer(
      (r) => {
        pushed.push(names(r));
        return new Promise<void>((resolve) => finish.push(resolve));
      },
      OPTIONS,
      { timers },
    );
    debouncer.enqueue(config("a"));
    await clock.tickAsync(100);
    assert.deepEqual(pushed, ["a"]);
    debouncer.enqueue(config("b"));
    await clock.tickAsync(500);
    assert.deepEqual(pushed, ["a"], "b waits while a is being pushed");
    assert.equal(debouncer.pendingEvents, 1);
    finish[0]();
    await clock.tickAsync(0);
    assert.deepEqual(pushed, ["a", "b"]);
    finish[1]();
    debouncer.close();
  }),
);

Deno.test(
  "PushDebouncer counts push triggers by reason and survives a failing push",
  withClock(async (clock, timers) => {
    const metrics = new Metrics("discovery", { version: "test", tag: "test" });
    const errors: string[] = [];
    let calls = 0;
    const debouncer = new PushDebouncer(
      () => {
        calls++;
        throw new Error("boom");
      },
      OPTIONS,
      {
        timers,
        metrics,
        log: {
          scope: "test",
          debugEnabled: false,
          debug() {},
          info() {},
          warn() {},
          fatal() {},
          error: (msg, fields) => void errors.push(`${msg}: ${fields?.error}`),
        },
      },
    );
    debouncer.enqueue(config("a"));
    debouncer.enqueue(config("b"));
    debouncer.enqueue(eds("c"));
    await clock.tickAsync(100);
    const values = (await metrics.counter("discovery_push_triggers").get()).values;
    assert.deepEqual(
      values.map((v) => [v.labels.type, v.value]).sort(),
      [["config", 2], ["endpoint", 1]],
    );
    assert.deepEqual(errors, ["push failed: boom"]);
    debouncer.enqueue(config("d"));
    await clock.tickAsync(100);
    assert.equal(calls, 2);
    debouncer.close();
    debouncer.enqueue(config("e"));
    await clock.tickAsync(1_000);
    assert.equal(calls, 2);
  }),
);

Deno.test("PushDebouncer keeps time on its monotonic clock: setting the wall clock back does not hold a push", async () => {
  const wall = FakeTimers.install({ now: 1_000_000, toFake: ["Date"] });
  const clock = FakeTimers.createClock(0);
  try {
    const pushed: string[] = [];
    const debouncer = new PushDebouncer((r) => void pushed.push(names(r)), OPTIONS, {
      timers: timersOf(clock),
    });
    debouncer.enqueue(config("a"));
    wall.setSystemTime(1_000_000 - 3_600_000);
    await clock.tickAsync(100);
    assert.deepEqual(pushed, ["a"]);
    debouncer.close();
  } finally {
    wall.uninstall();
  }
});

Deno.test(
  "PushDebouncer holds a push while the store writes a batch, until it ends or the max delay passes",
  withClock(async (clock, timers) => {
    const pushed: string[] = [];
    let held = true;
    const debouncer = new PushDebouncer((r) => void pushed.push(names(r)), OPTIONS, {
      timers,
      held: () => held,
    });
    debouncer.enqueue(config("a"));
    await clock.tickAsync(500);
    assert.deepEqual(pushed, [], "quiet, but the batch is still being written");
    held = false;
    await clock.tickAsync(100);
    assert.deepEqual(pushed, ["a"]);

    held = true;
    debouncer.enqueue(config("b"));
    await clock.tickAsync(999);
    assert.deepEqual(pushed, ["a"]);
    await clock.tickAsync(100);
    assert.deepEqual(pushed, ["a", "b"], "the max delay bounds the hold");
  }),
);
