import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { AnalysisScheduler } from "./analysis_scheduler.ts";
import type { AnalysisInput } from "./analysis_input.ts";
import type { Analyzer } from "./analyzer.ts";
import type { AnalysisSink, MessagesByResource } from "./analysis_sink.ts";
import { MESSAGES } from "./analysis_message.ts";

const INPUT: AnalysisInput = {
  mesh: () => [],
  rootNamespace: "mesh-system",
  systemNamespace: "mesh-system",
  meshNetworks: {},
};

/** An analyzer that counts its runs and reports one message per run. */
function countingAnalyzer(): Analyzer & { runs: number } {
  return {
    name: "test.Counting",
    description: "counts runs",
    requiresOrchestrator: false,
    runs: 0,
    *analyze(ctx) {
      this.runs++;
      ctx.report(
        MESSAGES.Deprecated,
        { kind: "VirtualService", namespace: "default", name: "a" },
        `run ${this.runs}`,
      );
      yield;
    },
  };
}

class RecordingSink implements AnalysisSink {
  readonly results: MessagesByResource[] = [];
  hold: Promise<void> | undefined;
  publish(result: MessagesByResource): Promise<void> | void {
    this.results.push(result);
    return this.hold;
  }
}

function setup(intervalMs = 1000, ready?: () => boolean) {
  const clock = FakeTimers.createClock();
  const analyzer = countingAnalyzer();
  const sink = new RecordingSink();
  const scheduler = new AnalysisScheduler({
    input: () => INPUT,
    analyzers: [analyzer],
    sinks: [sink],
    intervalMs,
    timers: timersOf(clock),
    log: new RecordingLogger(),
    ...(ready ? { ready } : {}),
  });
  return { clock, analyzer, sink, scheduler };
}

Deno.test("AnalysisScheduler coalesces the snapshots of an interval into one run, an interval after the first", async () => {
  const { clock, analyzer, sink, scheduler } = setup();
  scheduler.snapshot();
  await clock.tickAsync(400);
  scheduler.snapshot();
  scheduler.snapshot();
  await clock.tickAsync(599);
  assert.equal(analyzer.runs, 0);
  await clock.tickAsync(1);
  await scheduler.idle();
  assert.equal(analyzer.runs, 1);
  assert.equal(sink.results.length, 1);
  assert.deepEqual(sink.results[0].get("VirtualService/default/a")?.map((m) => m.code), ["IST0002"]);
  await scheduler.close();
});

Deno.test("AnalysisScheduler starts runs at most once per interval while snapshots keep coming", async () => {
  const { clock, analyzer, scheduler } = setup();
  for (let t = 0; t < 3000; t += 100) {
    scheduler.snapshot();
    await clock.tickAsync(100);
  }
  await scheduler.idle();
  assert.equal(analyzer.runs, 3);
  await scheduler.close();
});

Deno.test("AnalysisScheduler runs again after a run during which a snapshot came", async () => {
  const { clock, analyzer, sink, scheduler } = setup();
  let release!: () => void;
  sink.hold = new Promise((resolve) => release = resolve);
  scheduler.snapshot();
  await clock.tickAsync(1000);
  assert.equal(analyzer.runs, 1, "the first run is publishing");
  scheduler.snapshot();
  await clock.tickAsync(1000);
  assert.equal(analyzer.runs, 1, "no second run starts while the first is in progress");
  sink.hold = undefined;
  release();
  await scheduler.idle();
  assert.equal(analyzer.runs, 2);
  await scheduler.close();
});

Deno.test("AnalysisScheduler never runs after close", async () => {
  const { clock, analyzer, scheduler } = setup();
  scheduler.snapshot();
  await scheduler.close();
  scheduler.snapshot();
  await clock.tickAsync(5000);
  assert.equal(analyzer.runs, 0);
});

Deno.test("a long analysis run gives the event loop a turn between slices", async () => {
  const order: string[] = [];
  let now = 0;
  const analyzer: Analyzer = {
    name: "test.Slow",
    description: "takes several slices",
    requiresOrchestrator: false,
    *analyze() {
      for (let step = 0; step < 3; step++) {
        now += 10;
        order.push(`step ${step}`);
        if (step === 0) setTimeout(() => order.push("timer"), 0);
        yield;
      }
    },
  };
  const scheduler = new AnalysisScheduler({
    input: () => INPUT,
    analyzers: [analyzer],
    sinks: [],
    intervalMs: 0,
    sliceMs: 5,
    timers: {
      setTimeout: (cb, ms) => setTimeout(cb, ms),
      clearTimeout: (id) => clearTimeout(id as number),
      now: () => now,
    },
    log: new RecordingLogger(),
  });
  scheduler.snapshot();
  await new Promise((resolve) => setTimeout(resolve, 0));
  await scheduler.idle();
  assert.deepEqual(order.slice(0, 3), ["step 0", "timer", "step 1"]);
  await scheduler.close();
});

Deno.test("a failing analysis run is logged and the last published messages stay", async () => {
  const clock = FakeTimers.createClock();
  const log = new RecordingLogger();
  const sink = new RecordingSink();
  let fail = false;
  const analyzer: Analyzer = {
    name: "test.Failing",
    description: "fails when told",
    requiresOrchestrator: false,
    *analyze() {
      if (fail) throw new TypeError("Cannot read properties of undefined");
      yield;
    },
  };
  const scheduler = new AnalysisScheduler({
    input: () => INPUT,
    analyzers: [analyzer],
    sinks: [sink],
    intervalMs: 1000,
    timers: timersOf(clock),
    log,
  });
  scheduler.snapshot();
  await clock.tickAsync(1000);
  await scheduler.idle();
  fail = true;
  scheduler.snapshot();
  await clock.tickAsync(1000);
  await scheduler.idle();
  assert.equal(sink.results.length, 1, "the failed run publishes nothing");
  assert.ok(
    log.lines.some((l) => l.msg.startsWith("configuration analysis failed")),
    JSON.stringify(log.lines),
  );
  await scheduler.close();
});

Deno.test("AnalysisScheduler holds a run until its sources are listed, looking again each interval", async () => {
  let listed = false;
  const { clock, analyzer, scheduler } = setup(1000, () => listed);
  scheduler.snapshot();
  await clock.tickAsync(3000);
  await scheduler.idle();
  assert.equal(analyzer.runs, 0, "no run of a half-listed state");
  listed = true;
  await clock.tickAsync(1000);
  await scheduler.idle();
  assert.equal(analyzer.runs, 1, "the held run starts once listed, without another snapshot");
  await clock.tickAsync(5000);
  assert.equal(analyzer.runs, 1, "and runs once");
  await scheduler.close();
});
