import { type Html, html } from "@mesh/shared/http/html";
import { ctrlzPage } from "./ctrlz_layout.ts";

/**
 * The lines of a Prometheus text exposition that concern metrics whose name contains `query` (case-insensitive),
 * with their `# HELP` and `# TYPE` lines; everything when `query` is empty.
 */
export function filterExposition(text: string, query: string): string[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const q = query.trim().toLowerCase();
  if (q === "") return lines;
  return lines.filter((line) => {
    const name = line.startsWith("#") ? line.split(" ")[2] ?? "" : line.split(/[{\s]/)[0]!;
    return name.toLowerCase().includes(q);
  });
}

/** Metrics: the Prometheus text, searched by metric name (`?q=`, and as one types with the script). */
export function metricsPage(text: string, query: string): Html {
  const lines = filterExposition(text, query);
  const samples = lines.filter((l) => !l.startsWith("#")).length;
  return ctrlzPage(
    "Metrics",
    "/metricz/",
    html`
      <form class="inline" method="get" action="/metricz/" role="search">
        <label for="metric-query">Metric name contains</label>
        <input id="metric-query" name="q" type="search" value="${query}" autocomplete="off">
        <button type="submit">Search</button>
      </form>
      <p id="metric-count" role="status" aria-live="polite">${samples} samples</p>
      <pre id="metric-lines">${lines.map((l) => html`<span class="metric-line">${l}</span>`)}</pre>
    `,
  );
}
