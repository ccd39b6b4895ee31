import assert from "node:assert/strict";
import { type LogFlags, LogManager } from "./log_manager.ts";
import type { LogSink } from "./sinks.ts";

const SCOPES = ["ads", "all", "default", "model"];

/** A sink that keeps lines in memory. */
class MemorySink implements LogSink {
  lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  close(): void {}
}

function flags(overrides: Partial<LogFlags> = {}): LogFlags {
  return {
    log_as_json: false,
    log_caller: "",
    log_output_level: "default:info",
    log_rotate: "",
    log_rotate_max_age: 30,
    log_rotate_max_backups: 1000,
    log_rotate_max_size: 104857600,
    log_stacktrace_level: "default:none",
    log_target: ["stdout"],
    ...overrides,
  };
}

const fixedNow = () => new Date("2026-11-22T10:00:00.000Z");

Deno.test("LogManager filters by per-scope level", () => {
  const sink = new MemorySink();
  const logs = new LogManager(SCOPES, flags({ log_output_level: "ads:debug,default:warn" }), {
    sinks: [sink],
    now: fixedNow,
  });
  logs.scope("ads").debug("ads detail");
  logs.scope("default").info("dropped");
  logs.scope("default").warn("kept");
  logs.scope("model").info("model info at the default level");
  assert.equal(sink.lines.length, 3);
  assert.equal(sink.lines[0], "2026-11-22T10:00:00.000Z\tdebug\tads\tads detail\n");
  assert.match(sink.lines[1], /\twarn\tdefault\tkept\n$/);
});

Deno.test("LogManager writes one JSON object a line with time, level, scope, msg and fields", () => {
  const sink = new MemorySink();
  const logs = new LogManager(SCOPES, flags({ log_as_json: true }), { sinks: [sink], now: fixedNow });
  logs.scope("ads").info("pushed", { proxy: "sidecar~1.2.3.4~a.ns~ns.svc.cluster.local", bytes: 120 });
  assert.deepEqual(JSON.parse(sink.lines[0]), {
    time: "2026-11-22T10:00:00.000Z",
    level: "info",
    scope: "ads",
    msg: "pushed",
    proxy: "sidecar~1.2.3.4~a.ns~ns.svc.cluster.local",
    bytes: 120,
  });
});

Deno.test("LogManager adds caller information only for the listed scopes", () => {
  const sink = new MemorySink();
  const logs = new LogManager(SCOPES, flags({ log_as_json: true, log_caller: "ads" }), { sinks: [sink] });
  logs.scope("ads").info("with caller");
  logs.scope("model").info("without caller");
  assert.match(JSON.parse(sink.lines[0]).caller, /log_manager_test\.ts:\d+:\d+/);
  assert.equal(JSON.parse(sink.lines[1]).caller, undefined);
});

Deno.test("LogManager captures stack traces at or above the stack-trace level", () => {
  const sink = new MemorySink();
  const logs = new LogManager(SCOPES, flags({ log_as_json: true, log_stacktrace_level: "model:error" }), {
    sinks: [sink],
  });
  logs.scope("model").warn("no stack");
  logs.scope("model").error("with stack");
  assert.equal(JSON.parse(sink.lines[0]).stack, undefined);
  assert.match(JSON.parse(sink.lines[1]).stack, /log_manager_test\.ts/);
});

Deno.test("LogManager changes levels while running, including 'all'", () => {
  const sink = new MemorySink();
  const logs = new LogManager(SCOPES, flags(), { sinks: [sink] });
  const ads = logs.scope("ads");
  ads.debug("before");
  assert.equal(ads.debugEnabled, false);
  logs.setLevel("ads", "debug");
  ads.debug("after");
  assert.equal(sink.lines.length, 1);
  logs.setLevel("all", "none");
  ads.error("silenced");
  assert.equal(sink.lines.length, 1);
  assert.equal(logs.levels().find((l) => l.scope === "ads")?.outputLevel, "none");
});

Deno.test("LogManager rejects unknown scopes and levels naming the flag", async (t) => {
  await t.step("unknown scope in --log_output_level", () => {
    assert.throws(
      () => new LogManager(SCOPES, flags({ log_output_level: "nope:debug" })),
      /--log_output_level "nope:debug": unknown scope "nope"; expected one of ads, all/,
    );
  });
  await t.step("unknown level in --log_stacktrace_level", () => {
    assert.throws(
      () => new LogManager(SCOPES, flags({ log_stacktrace_level: "ads:loud" })),
      /--log_stacktrace_level "ads:loud": unknown level "loud"; expected one of debug, info/,
    );
  });
  await t.step("unknown scope in --log_caller", () => {
    assert.throws(() => new LogManager(SCOPES, flags({ log_caller: "ads,xyz" })), /--log_caller.*"xyz"/);
  });
  await t.step("unknown scope at runtime", () => {
    const logs = new LogManager(SCOPES, flags(), { sinks: [] });
    assert.throws(() => logs.scope("xyz"), /Unknown log scope "xyz"/);
    assert.throws(() => logs.setLevel("ads", "loud" as never), /unknown level "loud"/);
  });
});

Deno.test("LogManager writes to several targets at once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const logs = new LogManager(SCOPES, flags({ log_target: [`${dir}/a.log`, `${dir}/b.log`] }));
    logs.scope("default").info("to both");
    logs.close();
    for (const name of ["a.log", "b.log"]) {
      assert.match(await Deno.readTextFile(`${dir}/${name}`), /\tinfo\tdefault\tto both\n$/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
