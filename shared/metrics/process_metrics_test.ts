import assert from "node:assert/strict";
import { Metrics } from "./metrics.ts";
import { exportProcessMetrics, type ProcessFigures, readProcessFigures } from "./process_metrics.ts";

/** The value of an unlabelled metric in `text`, or undefined when it has none. */
function valueOf(text: string, name: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

Deno.test("The process's figures are read at each scrape, its CPU time only ever added to", async () => {
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  let figures: ProcessFigures = { cpuSeconds: 1.5, residentBytes: 100 };
  exportProcessMetrics(metrics, () => figures, 1_700_000_000_500);
  let text = await metrics.render();
  assert.equal(valueOf(text, "process_cpu_seconds_total"), 1.5);
  assert.equal(valueOf(text, "process_resident_memory_bytes"), 100);
  assert.equal(valueOf(text, "process_start_time_seconds"), 1_700_000_000);

  figures = { cpuSeconds: 2.25, residentBytes: 150 };
  text = await metrics.render();
  assert.equal(valueOf(text, "process_cpu_seconds_total"), 2.25);
  assert.equal(valueOf(text, "process_resident_memory_bytes"), 150);

  figures = { cpuSeconds: 2, residentBytes: 150 };
  text = await metrics.render();
  assert.equal(valueOf(text, "process_cpu_seconds_total"), 2.25, "a counter does not go down");
});

Deno.test("readProcessFigures reads this process's CPU time and resident memory", () => {
  const before = readProcessFigures();
  let spin = 0;
  for (let i = 0; i < 5e6; i++) spin += i;
  const after = readProcessFigures();
  assert.ok(spin > 0 && after.cpuSeconds > before.cpuSeconds, "CPU time grows with work");
  assert.ok(after.residentBytes > 1024 * 1024);
});
