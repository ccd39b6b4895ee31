import assert from "node:assert/strict";
import { filterExposition, metricsPage } from "./metrics_page.ts";
import { argumentsPage, environmentPage, formatBytes, formatDuration, homePage } from "./process_pages.ts";
import { scopesPage } from "./scopes_page.ts";

const evil = "<script>alert(1)</script>";

Deno.test("ControlZ pages show arguments, environment values and metric labels as text", () => {
  const pages = [
    argumentsPage(["discovery", evil]),
    environmentPage([{ name: "X", type: "string", value: evil, source: "environment", description: evil }]),
    metricsPage(`# HELP m ${evil}\n# TYPE m counter\nm{path="${evil}"} 1\n`, evil),
    scopesPage([{ name: evil, output_level: "info", stack_trace_level: "none", log_callers: false }]),
    homePage(
      { program: evil, version: evil, pid: 1, ppid: 0, hostname: evil, started: evil, uptimeSeconds: 3 },
      [{ path: "/x", methods: ["GET"], help: evil }],
    ),
  ];
  for (const page of pages) {
    assert.doesNotMatch(page.text, /<script>alert/);
    assert.match(page.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  }
});

Deno.test("The scopes page offers every level for each scope, the current one selected, with labels", () => {
  const page =
    scopesPage([{ name: "ads", output_level: "debug", stack_trace_level: "none", log_callers: true }]).text;
  assert.match(
    page,
    /<select id="scope-ads-output" name="output_level" form="scope-ads" aria-label="Output level of ads">/,
  );
  assert.match(page, /<option value="debug" selected>debug<\/option>/);
  assert.match(page, /<option value="none" selected>none<\/option>/);
  assert.match(page, /aria-label="Log callers of ads"\s+checked/);
  assert.match(page, /role="status"/);
});

Deno.test("The metrics search keeps the matching families with their HELP and TYPE lines", () => {
  const text =
    '# HELP a_total A\n# TYPE a_total counter\na_total 1\n# HELP b B\n# TYPE b gauge\nb{x="a_total"} 2\n';
  assert.deepEqual(filterExposition(text, "A_TOT"), [
    "# HELP a_total A",
    "# TYPE a_total counter",
    "a_total 1",
  ]);
  assert.equal(filterExposition(text, "").length, 6);
});

Deno.test("ControlZ formats durations and sizes for people", () => {
  assert.equal(formatDuration(3725), "1h 2m 5s");
  assert.equal(formatDuration(90061), "1d 1h 1m 1s");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.5 KiB");
});
