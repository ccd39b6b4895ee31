/**
 * The debug overview (`/debug/overview`): connected proxies and whether each is in sync, their last
 * rejection, the config the sources refused, the config resources, and a chart of the recent pushes. A pure
 * function of what it shows; every value is escaped by `html`, and every row links to the JSON it came from.
 *
 * @module
 */
import { dataTable, factList, type Html, html, layout } from "@mesh/shared/http/html";
import { lineChart } from "@mesh/shared/http/svg_chart";
import type { RejectedConfig } from "../model/config_store.ts";
import type { PushBucket } from "../push/push_history.ts";

/** Path of the stylesheet the overview loads from the debug interface. */
export const DEBUG_STYLESHEET = "/debug/static/mesh.css";

/** One connected proxy as the overview lists it (the xDS server's `proxyOverview`). */
export interface OverviewProxy {
  readonly connectionId: string;
  readonly proxyId: string;
  readonly proxyType: string;
  readonly version?: string;
  readonly cluster?: string;
  readonly protocol: string;
  readonly connectedAt: string;
  readonly types: readonly { readonly type: string; readonly state: string; readonly versionSent?: string }[];
  readonly lastNack?: {
    readonly type: string;
    readonly code: string;
    readonly message: string;
    readonly at: string;
  };
}

/** One singleton duty: whether this replica leads it, and who holds its Lease. */
export interface OverviewDuty {
  readonly duty: string;
  readonly leading: boolean;
  /** The holder last seen; empty when none. */
  readonly holder: string;
}

/** Everything the overview shows. */
export interface DebugOverview {
  /** The singleton duties, when the server elects leaders for them. */
  readonly duties?: readonly OverviewDuty[];
  readonly proxies: readonly OverviewProxy[];
  /** Version of the latest push snapshot, when one exists. */
  readonly latestPush?: string;
  /** Config resources in effect: kind, namespace, name. */
  readonly resources: readonly { readonly kind: string; readonly namespace: string; readonly name: string }[];
  readonly rejected: readonly RejectedConfig[];
  /** The push history, oldest bucket first, and the whole window. */
  readonly pushes: {
    readonly buckets: readonly PushBucket[];
    readonly window: PushBucket;
    readonly spanMs: number;
  };
}

/** Config resources listed on the page; the rest are counted and left to `/debug/configz`. */
const RESOURCE_ROWS = 500;

const STATE_TEXT: Record<string, string> = {
  synced: "in sync",
  behind: "behind the latest push",
  pending: "waiting for ACK",
  rejected: "rejected (NACK)",
};

/** The overview page. */
export function debugOverviewPage(view: DebugOverview): Html {
  const inSync = view.proxies.filter((p) => p.types.every((t) => t.state === "synced")).length;
  const minutes = Math.round(view.pushes.spanMs / 60_000);
  const body = html`${
    factList([
      ["Connected proxies", html`<a href="/debug/adsz">${view.proxies.length}</a>`],
      ["In sync with the latest push", html`<a href="/debug/syncz">${inSync} of ${view.proxies.length}</a>`],
      ["Latest push", html`<a href="/debug/push_status"><code>${view.latestPush ?? "none yet"}</code></a>`],
      ["Rejected config documents", html`<a href="/debug/configz">${view.rejected.length}</a>`],
      ...(view.duties === undefined ? [] : [[
        "Singleton duties led here",
        html`<a href="#duties">${view.duties.filter((d) => d.leading).length} of ${view.duties.length}</a>`,
      ] as [string, Html]]),
    ])
  }
<h2 id="pushes">Pushes, last ${minutes} minutes</h2>
${pushCharts(view.pushes, minutes)}
<h2 id="proxies">Connected proxies</h2>
${proxyTable(view.proxies)}
${
    view.duties === undefined ? "" : html`<h2 id="duties">Singleton duties</h2>
${dutyTable(view.duties)}`
  }
<h2 id="rejected">Rejected config</h2>
${rejectedTable(view.rejected)}
<h2 id="resources">Config resources</h2>
${resourceTable(view.resources)}`;
  return layout({
    title: "Debug overview",
    site: "mesh-discovery debug",
    nav: [
      { href: "/debug/overview", label: "Overview" },
      { href: "/debug", label: "Every debug path (JSON)" },
      { href: "/metrics", label: "Metrics" },
    ],
    current: "/debug/overview",
    stylesheet: DEBUG_STYLESHEET,
    body,
  });
}

function pushCharts(pushes: DebugOverview["pushes"], minutes: number): Html {
  const w = pushes.window;
  const ms = (s: number | undefined) => s === undefined ? undefined : s * 1000;
  return html`<p>${w.pushes} proxy ${w.pushes === 1 ? "push" : "pushes"} (${
    w.perSecond.toFixed(2)
  } a second); push time p50 ${formatMs(ms(w.p50))}, p90 ${formatMs(ms(w.p90))}, p99 ${
    formatMs(ms(w.p99))
  }. Push time runs from the first change behind
a push to the proxy having been sent everything. See <a href="/metrics">/metrics</a>
(<code>discovery_proxy_convergence_time</code>).</p>
${
    lineChart({
      title: "Proxy pushes per second",
      unit: "pushes/s",
      span: `last ${minutes} minutes`,
      series: [{
        label: "pushes per second",
        className: "s1",
        values: pushes.buckets.map((b) => b.perSecond),
      }],
    })
  }
${
    lineChart({
      title: "Push time percentiles",
      unit: "ms",
      span: `last ${minutes} minutes`,
      series: [
        { label: "p50", className: "s1", values: pushes.buckets.map((b) => ms(b.p50)) },
        { label: "p90", className: "s2", values: pushes.buckets.map((b) => ms(b.p90)) },
        { label: "p99", className: "s3", values: pushes.buckets.map((b) => ms(b.p99)) },
      ],
    })
  }`;
}

function formatMs(value: number | undefined): string {
  return value === undefined ? "none" : `${value >= 10 ? value.toFixed(0) : value.toPrecision(2)} ms`;
}

function proxyTable(proxies: readonly OverviewProxy[]): Html {
  if (proxies.length === 0) return html`<p class="muted">No proxy is connected.</p>`;
  return dataTable(
    ["Proxy", "Type", "Version", "Cluster", "Types held", "Last NACK", "JSON"],
    proxies.map(proxyRow),
    "proxy-table",
  );
}

function proxyRow(p: OverviewProxy): Html {
  const id = encodeURIComponent(p.proxyId);
  const types = p.types.map((t) =>
    html`<li><span class="${stateClass(t.state)}">${t.type}: ${STATE_TEXT[t.state] ?? t.state}</span></li>`
  );
  const nack = p.lastNack === undefined
    ? html`<span class="muted">none</span>`
    : html`<span class="bad">${p.lastNack.type} ${p.lastNack.code}</span> at ${timeOf(p.lastNack.at)}:
<q class="nack">${p.lastNack.message}</q>`;
  return html`
    <tr data-proxy="${p.proxyId}">
      <th scope="row"><code>${p.proxyId}</code><br><span class="muted">${p.protocol}, since ${timeOf(
        p.connectedAt,
      )}</span></th>
      <td>${p.proxyType}</td>
      <td>${p.version ?? "unknown"}</td>
      <td>${p.cluster ?? "unknown"}</td>
      <td>
        <ul>${types}</ul>
      </td>
      <td>${nack}</td>
      <td><a href="/debug/syncz">syncz</a>, <a href="/debug/config_dump?proxyID=${id}">config_dump</a>,
    <a href="/debug/adsz">adsz</a></td>
    </tr>
  `;
}

/** An ISO 8601 time shown as `2026-11-27 18:40:53` (UTC, breakable at the space), exact in `datetime`. */
function timeOf(iso: string): Html {
  return html`<time datetime="${iso}">${iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "")}</time>`;
}

function stateClass(state: string): string {
  return state === "synced" ? "good" : state === "rejected" ? "bad" : "warn";
}

function dutyTable(duties: readonly OverviewDuty[]): Html {
  return dataTable(
    ["Duty (Lease)", "Led here", "Holder", "JSON"],
    duties.map((d) =>
      html`
        <tr>
          <td><code>${d.duty}</code></td>
          <td><span class="${d.leading ? "good" : "muted"}">${d.leading ? "yes" : "no"}</span></td>
          <td>${d.holder === "" ? html`<span class="muted">none</span>` : html`<code>${d.holder}</code>`}</td>
          <td><a href="/debug/leaderz">leaderz</a></td>
        </tr>
      `
    ),
    "duty-table",
  );
}

function rejectedTable(rejected: readonly RejectedConfig[]): Html {
  if (rejected.length === 0) return html`<p class="muted">No document is refused.</p>`;
  return dataTable(
    ["Document", "Resource", "Why", "JSON"],
    rejected.map((r) =>
      html`
        <tr>
          <td><code>${r.file}:${r.line}</code></td>
          <td>${r.kind ?? "unknown kind"} <code>${r.namespace === undefined
            ? ""
            : `${r.namespace}/`}${r.name ?? "(no name)"}</code></td>
          <td>
            <ul>${r.errors.map((e) => html`<li>${e}</li>`)}</ul>
          </td>
          <td><a href="/debug/configz">configz</a></td>
        </tr>
      `
    ),
    "rejected-table",
  );
}

function resourceTable(resources: DebugOverview["resources"]): Html {
  if (resources.length === 0) return html`<p class="muted">No config resource is loaded.</p>`;
  const shown = resources.slice(0, RESOURCE_ROWS);
  const rows = shown.map((r) =>
    html`
      <tr>
        <td>${r.kind}</td>
        <td>${r.namespace}</td>
        <td><code>${r.name}</code></td>
        <td><a href="/debug/configz">configz</a></td>
      </tr>
    `
  );
  const more = resources.length - shown.length;
  return html`${dataTable(["Kind", "Namespace", "Name", "JSON"], rows, "resource-table")}${
    more > 0 ? html`<p>And ${more} more: see <a href="/debug/configz">/debug/configz</a>.</p>` : ""
  }`;
}
