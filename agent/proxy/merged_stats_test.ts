import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { needs, PROMTOOL } from "@mesh/shared/testing/system_tools";
import { MergedStats } from "./merged_stats.ts";
import { registryStatsSource, type StatsSource } from "./stats_sources.ts";

/** A fake source answering with `text`, or failing with `error`. */
function source(name: string, answer: { text: string } | { error: string }): StatsSource {
  return {
    name,
    read: () => "text" in answer ? Promise.resolve(answer.text) : Promise.reject(new Error(answer.error)),
  };
}

/** A fake source that answers only once its signal fires, and then with a rejection (as an aborted fetch). */
function hangingSource(name: string, ignoresSignal = false): StatsSource & { sawAbort: boolean } {
  const fake = {
    name,
    sawAbort: false,
    read: ({ signal }: { signal: AbortSignal }) =>
      new Promise<string>((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          fake.sawAbort = true;
          if (!ignoresSignal) reject(signal.reason);
        });
      }),
  };
  return fake;
}

/** A scrape's exposition as text. */
const text = async (stats: MergedStats) => new TextDecoder().decode(await stats.render());

const agentMetrics = () => new Metrics("agent", { version: "1.0.0", tag: "1.0.0" });

const ENVOY =
  '# TYPE envoy_cluster_upstream_cx_total counter\nenvoy_cluster_upstream_cx_total{cluster="a"} 3\n';
const APP = "# TYPE app_requests_total counter\napp_requests_total 7"; // no trailing line break

Deno.test("MergedStats concatenates every source's exposition in order", async () => {
  const metrics = agentMetrics();
  const stats = new MergedStats({
    sources: [source("envoy", { text: ENVOY }), source("application", { text: APP })],
    metrics,
    log: new RecordingLogger(),
  });
  assert.equal(await text(stats), `${ENVOY}${APP}\n`, "each part ends its last line");
  assert.match(await metrics.render(), /^scrapes_total 1$/m, "the scrape is counted");
});

Deno.test("MergedStats skips a failing source with a comment line and serves the others", async (t) => {
  const log = new RecordingLogger();
  const metrics = agentMetrics();
  const stats = new MergedStats({
    sources: [
      source("envoy", { text: ENVOY }),
      source("application", { error: "http://127.0.0.1:9090/metrics answered HTTP 500\nwith a second line" }),
    ],
    metrics,
    log,
  });

  await t.step("the failure is one comment line in place of the source", async () => {
    assert.equal(
      await text(stats),
      `${ENVOY}# mesh-agent skipped the application metrics: http://127.0.0.1:9090/metrics answered HTTP 500 with a second line\n`,
    );
  });

  await t.step("it is counted in scrape_failures_total by source", async () => {
    assert.match(await metrics.render(), /^scrape_failures_total\{type="application"\} 1$/m);
  });

  await t.step("it is logged once however often it fails", async () => {
    await text(stats);
    await text(stats);
    assert.equal(log.matching("warn", "metrics source application is failing").length, 1);
    assert.match(await metrics.render(), /^scrape_failures_total\{type="application"\} 3$/m);
  });
});

Deno.test("MergedStats gives each source until its timeout", async (t) => {
  await t.step("a source that honours its signal is aborted and skipped", async () => {
    const slow = hangingSource("application");
    const stats = new MergedStats({
      sources: [source("envoy", { text: ENVOY }), slow],
      timeoutMs: 50,
      metrics: agentMetrics(),
      log: new RecordingLogger(),
    });
    assert.equal(
      await text(stats),
      `${ENVOY}# mesh-agent skipped the application metrics: no answer within 50 ms\n`,
    );
    assert.ok(slow.sawAbort);
  });

  await t.step("a source that ignores its signal is still not waited for", async () => {
    const stuck = hangingSource("application", true);
    const stats = new MergedStats({
      sources: [stuck, source("envoy", { text: ENVOY })],
      timeoutMs: 50,
      metrics: agentMetrics(),
      log: new RecordingLogger(),
    });
    assert.equal(
      await text(stats),
      `# mesh-agent skipped the application metrics: no answer within 50 ms\n${ENVOY}`,
    );
  });
});

Deno.test("MergedStats hands each source its size cap", async () => {
  let cap = 0;
  const stats = new MergedStats({
    sources: [{ name: "envoy", read: ({ maxBytes }) => (cap = maxBytes, Promise.resolve("")) }],
    maxBytes: 1234,
    metrics: agentMetrics(),
    log: new RecordingLogger(),
  });
  assert.equal(await text(stats), "");
  assert.equal(cap, 1234);
});

Deno.test(
  "The merged exposition with a skipped source passes promtool check metrics",
  needs(PROMTOOL),
  async () => {
    const metrics = agentMetrics();
    const stats = new MergedStats({
      sources: [
        source("envoy", { text: ENVOY }),
        registryStatsSource("agent", metrics),
        source("application", { error: "connection refused" }),
      ],
      metrics,
      log: new RecordingLogger(),
    });
    await text(stats); // so the agent's own exposition carries a failure count
    const child = new Deno.Command("promtool", {
      args: ["check", "metrics"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    })
      .spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(await text(stats)));
    await writer.close();
    const { code, stdout, stderr } = await child.output();
    const report = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    // Exit code 1 is a parse failure; lint findings (3) are about the reference's metric names, not the merge.
    assert.notEqual(code, 1, report);
    assert.doesNotMatch(report, /error while linting|parse error|text format parsing error/i, report);
  },
);

Deno.test("Scrapes asked for while one is under way share it: each source is read once", async () => {
  const metrics = agentMetrics();
  let reads = 0;
  const answer = Promise.withResolvers<string>();
  const stats = new MergedStats({
    sources: [{ name: "envoy", read: () => (reads++, answer.promise) }, source("application", { text: APP })],
    metrics,
    log: new RecordingLogger(),
  });
  const scrapes = [stats.render(), stats.render(), stats.render()];
  answer.resolve(ENVOY);
  const [first, ...others] = await Promise.all(scrapes);
  assert.equal(new TextDecoder().decode(first), `${ENVOY}${APP}\n`);
  for (const other of others) assert.equal(other, first, "the same bytes, not a copy");
  assert.equal(reads, 1);
  assert.match(await metrics.render(), /^scrapes_total 3$/m, "every scrape is counted");
  assert.equal(await text(stats), `${ENVOY}${APP}\n`);
  assert.equal(reads, 2, "a scrape asked for after the last one ended reads the sources again");
});
