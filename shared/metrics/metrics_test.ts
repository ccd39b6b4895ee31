import assert from "node:assert/strict";
import { Metrics } from "./metrics.ts";
import { METRIC_SPECS } from "./metric_specs.ts";
import { needs, PROMTOOL } from "../testing/system_tools.ts";

const surface = JSON.parse(
  await Deno.readTextFile(new URL("../../tests/fixtures/reference-surface/surface.json", import.meta.url)),
);

/** Names in a Prometheus text exposition, with their TYPE lines. */
function declaredTypes(text: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^# TYPE (\S+) (counter|gauge|histogram)$/.exec(line);
    if (m) types.set(m[1], m[2]);
  }
  return types;
}

Deno.test("Metrics registers every metric of the discovery reference under its exact name and mapped type", async () => {
  const metrics = new Metrics("discovery", { version: "1.0.0", tag: "1.0.0" });
  const types = declaredTypes(await metrics.render());
  const expected = [...surface.discovery.metrics, ...surface.discovery.metrics_shared];
  for (const name of expected) assert.ok(types.has(name), `${name} is missing`);
  for (const spec of METRIC_SPECS.filter((s) => s.programs.includes("discovery"))) {
    const want =
      { Sum: "counter", Count: "counter", LastValue: "gauge", Distribution: "histogram" }[spec.kind];
    assert.equal(types.get(spec.name), want, spec.name);
  }
  assert.ok(!types.has("total_pushes"), "agent-only metrics stay out of discovery");
});

Deno.test("Metrics registers every metric of the agent reference", async () => {
  const metrics = new Metrics("agent", { version: "1.0.0", tag: "1.0.0" });
  const types = declaredTypes(await metrics.render());
  for (const name of [...surface.agent.metrics, ...surface.discovery.metrics_shared]) {
    assert.ok(types.has(name), `${name} is missing`);
  }
  assert.ok(!types.has("ca_server_csr_count"));
});

Deno.test("mesh_build carries the build version labels", async () => {
  const metrics = new Metrics("discovery", { version: "1.2.3", tag: "1.2.3" });
  assert.match(await metrics.render(), /^mesh_build\{component="discovery",tag="1\.2\.3"\} 1$/m);
});

Deno.test("Metrics accessors fail loudly on unknown names and mismatched types", () => {
  const metrics = new Metrics("discovery", { version: "1", tag: "1" });
  assert.throws(() => metrics.counter("no_such_metric"), /not declared for discovery/);
  assert.throws(() => metrics.counter("discovery_xds"), /not a counter/);
  metrics.counter("discovery_push_triggers").inc({ type: "config" });
});

/** Asserts promtool finds no parse error in `text`, and only the reference's naming in its lint. */
async function assertPromtoolClean(text: string): Promise<void> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const report = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  // promtool lints naming conventions (counters ending in _total, units); those are the reference's names and
  // stay as they are. Any parse error is a failure.
  assert.doesNotMatch(report, /error while linting|parse error|text format parsing error/i, report);
  // Exit code 1 is a parse failure; 3 means only lint findings, each of which must be a naming finding.
  assert.notEqual(code, 1, report);
  for (const line of report.split("\n").filter((l) => l.trim() !== "")) {
    assert.match(
      line,
      /should have "_total" suffix|should not have "_(total|count)" suffix|use base unit/,
      line,
    );
  }
}

Deno.test("The rendered registry passes promtool check metrics", needs(PROMTOOL), async () => {
  const metrics = new Metrics("discovery", { version: "1", tag: "1" });
  metrics.histogram("discovery_proxy_convergence_time").observe(0.2);
  metrics.counter("discovery_push_triggers").inc({ type: "endpoint" });
  await assertPromtoolClean(await metrics.render());
});

Deno.test(
  "The agent's registry, its own metrics moved, passes promtool check metrics",
  needs(PROMTOOL),
  async () => {
    const metrics = new Metrics("agent", { version: "1", tag: "1" });
    metrics.counter("xds_proxy_requests").inc();
    metrics.counter("xds_proxy_responses").inc();
    metrics.counter("meshd_connection_terminations").inc({ type: "error" });
    metrics.counter("envoy_connection_terminations").inc({ type: "cancelled" });
    metrics.counter("xds_proxy_upstream_reconnects").inc({ reason: "upstream_lost" });
    metrics.counter("num_outgoing_requests").inc({ request_type: "csr" });
    metrics.gauge("startup_duration_seconds").set(1.25);
    await assertPromtoolClean(await metrics.render());
  },
);

Deno.test("A metric a program never moves says so in its help, and only in that program", async () => {
  const discovery = await new Metrics("discovery", { version: "1", tag: "1" }).render();
  assert.match(
    discovery,
    /^# HELP mesh_mcp_clients_total .* Not emitted: MCP is not built \(issue: #31\)\.$/m,
  );
  assert.doesNotMatch(discovery, /^# HELP discovery_xds_pushes .*Not emitted/m);
  const agent = await new Metrics("agent", { version: "1", tag: "1" }).render();
  assert.match(agent, /^# HELP discovery_xds_pushes .* Not emitted: a mesh-discovery metric/m);
});
