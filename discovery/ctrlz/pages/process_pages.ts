/**
 * ControlZ pages that show facts about the process: home, memory, process, environment, arguments, version.
 * Each is a pure function of the data it shows; every value is escaped by `html`.
 *
 * @module
 */
import { dataTable, factList, type Html, html } from "@mesh/shared/http/html";
import type { Route } from "@mesh/shared/http/router";
import type { ResolvedEnvVar } from "@mesh/shared/env/env_settings";
import type { BuildInfo } from "@mesh/shared/version/build_info";
import { ctrlzPage } from "./ctrlz_layout.ts";
import type { ProcessFacts } from "../process_facts.ts";

/** `3725` → `1h 2m 5s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const parts = [[Math.floor(s / 86400), "d"], [Math.floor(s / 3600) % 24, "h"], [
    Math.floor(s / 60) % 60,
    "m",
  ]]
    .filter(([n]) => (n as number) > 0).map(([n, u]) => `${n}${u}`);
  return [...parts, `${s % 60}s`].join(" ");
}

/** Bytes in binary units: `1536` → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Home: who this is, how long it has run, and every page and JSON path. */
export function homePage(facts: ProcessFacts, routes: readonly Route[]): Html {
  return ctrlzPage(
    facts.program,
    "/",
    html`${
      factList([
        ["Program", facts.program],
        ["Version", facts.version],
        [
          "Uptime",
          html`<span data-uptime="${facts.uptimeSeconds}">${formatDuration(facts.uptimeSeconds)}</span>`,
        ],
        ["PID", facts.pid],
        ["Hostname", facts.hostname ?? "unknown"],
        ["Started", facts.started],
      ])
    }
<h2>Every path</h2>
${
      dataTable(
        ["Path", "Methods", "What"],
        routes.map((r) =>
          html`
            <tr>
              <td><a href="${r.path}"><code>${r.path}</code></a></td>
              <td>${r.methods.join(", ")}</td>
              <td>${r.help}</td>
            </tr>
          `
        ),
      )
    }`,
  );
}

/** Memory: `Deno.memoryUsage()` (live with the script) and the V8 heap limit. */
export function memoryPage(usage: Readonly<Record<string, number>>, heapLimit: number | undefined): Html {
  const labels: Record<string, string> = {
    heapUsed: "Heap used",
    heapTotal: "Heap total",
    rss: "Resident set size",
    external: "External and array buffers",
    nativeInUse: "Native (glibc) in use",
    nativeFree: "Native (glibc) free, kept",
    mainArenaInUse: "Main arena in use",
    mainArenaFree: "Main arena free, kept",
  };
  return ctrlzPage(
    "Memory",
    "/memz/",
    html`
      <p class="muted">From <a href="/memj/"><code>/memj/</code></a>; refreshed every 2 seconds while
      JavaScript runs. Deno reports no garbage-collection counts.</p>
      <dl class="facts" id="memory" data-source="/memj/">${Object.entries(usage).map(([key, value]) =>
        html`
          <dt>${labels[key] ?? key}</dt>
          <dd data-mem="${key}">${formatBytes(value)}</dd>
        `
      )}${heapLimit === undefined ? "" : html`
        <dt>Heap limit</dt>
        <dd>${formatBytes(heapLimit)}</dd>
      `}</dl>
      <h2>Last minutes</h2>
      <figure class="chart" id="memory-chart">
        <svg viewBox="0 0 600 160" role="img" aria-label="Heap used and resident set size since this page opened"
          preserveAspectRatio="none">
          <line class="axis" x1="0" y1="156" x2="600" y2="156" stroke-width="1"></line>
          <path class="s1" fill="none" stroke-width="2" d="" data-series="heapUsed"></path>
          <path class="s2" fill="none" stroke-width="2" d="" data-series="rss"></path>
        </svg>
        <figcaption><span class="key s1">Heap used</span> <span class="key s2">Resident set size</span>
      <span id="memory-scale"></span></figcaption>
      </figure>
    `,
  );
}

/** Process: ids, host, start time, working directory. */
export function processPage(facts: ProcessFacts): Html {
  return ctrlzPage(
    "Process",
    "/procz/",
    html`<p class="muted">From <a href="/procj/"><code>/procj/</code></a>.</p>${
      factList([
        ["PID", facts.pid],
        ["Parent PID", facts.ppid],
        ["Hostname", facts.hostname ?? "unknown"],
        ["Started", facts.started],
        ["Uptime", formatDuration(facts.uptimeSeconds)],
        ["Working directory", facts.cwd ?? "unknown"],
      ])
    }`,
  );
}

/** Environment: every variable the program reads, its value and whether it was set. */
export function environmentPage(vars: readonly ResolvedEnvVar[]): Html {
  return ctrlzPage(
    "Environment",
    "/envz/",
    html`
      <p class="muted">Variables this program reads, resolved; from <a href="/envj/"><code>/envj/</code></a>.</p>
      ${dataTable(
        ["Variable", "Value", "Source", "What"],
        vars.map((v) =>
          html`
            <tr>
              <td><code>${v.name}</code></td>
              <td><code>${v.value}</code></td>
              <td>${v.source}</td>
              <td>${v.description}</td>
            </tr>
          `
        ),
      )}
    `,
  );
}

/** Arguments: the command line, one argument a row. */
export function argumentsPage(args: readonly string[]): Html {
  return ctrlzPage(
    "Arguments",
    "/argsz/",
    html`<p class="muted">From <a href="/argsj/"><code>/argsj/</code></a>.</p>
<ol class="mono">${args.map((a) => html`<li>${a}</li>`)}</ol>`,
  );
}

/** Version: the build information. */
export function versionPage(info: BuildInfo): Html {
  return ctrlzPage(
    "Version",
    "/versionz/",
    html`<p class="muted">From <a href="/versionj/"><code>/versionj/</code></a>.</p>${
      factList(Object.entries(info).map(([k, v]) => [k, String(v)] as const))
    }`,
  );
}
