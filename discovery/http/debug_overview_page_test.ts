import assert from "node:assert/strict";
import { PushHistory } from "../push/push_history.ts";
import { type DebugOverview, debugOverviewPage } from "./debug_overview_page.ts";

function view(overrides: Partial<DebugOverview> = {}): DebugOverview {
  let now = 0;
  const pushes = new PushHistory({ bucketMs: 1000, buckets: 10, now: () => now });
  pushes.record(0.003);
  now = 1500;
  pushes.record(0.04);
  return {
    proxies: [],
    latestPush: "2026-11-27T18:00:00Z/3",
    resources: [],
    rejected: [],
    pushes: { buckets: pushes.series(), window: pushes.summary(), spanMs: pushes.spanMs },
    ...overrides,
  };
}

Deno.test("The debug overview shows a config resource named <script> as text, and every other value escaped", () => {
  const evil = "<script>alert(1)</script>";
  const page = debugOverviewPage(view({
    resources: [{ kind: "VirtualService", namespace: "default", name: evil }],
    rejected: [{
      file: `/cfg/${evil}.yaml`,
      line: 3,
      kind: "Gateway",
      name: evil,
      errors: [`spec: ${evil}`],
    }],
    proxies: [{
      connectionId: "c1",
      proxyId: `${evil}.default`,
      proxyType: "sidecar",
      version: evil,
      cluster: evil,
      protocol: "sotw",
      connectedAt: "2026-11-27T18:00:00.000Z",
      types: [{ type: "Cluster", state: "rejected" }],
      lastNack: { type: "Cluster", code: "INVALID_ARGUMENT", message: evil, at: "2026-11-27T18:00:01.000Z" },
    }],
  })).text;
  assert.doesNotMatch(page, /<script>/);
  assert.match(page, /<code>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/code>/);
  assert.match(page, /<q class="nack">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/q>/);
  assert.match(page, /config_dump\?proxyID=%3Cscript%3Ealert\(1\)%3C%2Fscript%3E.default/);
});

Deno.test("The debug overview says which proxies are in sync, links each row to its JSON, and charts pushes", () => {
  const page = debugOverviewPage(view({
    proxies: [{
      connectionId: "c1",
      proxyId: "a.default",
      proxyType: "router",
      version: "1.9.9",
      cluster: "Kubernetes",
      protocol: "delta",
      connectedAt: "2026-11-27T18:00:00.000Z",
      types: [{ type: "Cluster", state: "synced" }, { type: "Listener", state: "pending" }],
    }],
    rejected: [{ file: "/cfg/bad.yaml", line: 1, errors: ["/cfg/bad.yaml:1: spec.hosts: expected a list"] }],
  })).text;
  assert.match(page, /In sync with the latest push<\/dt>\s*<dd><a href="\/debug\/syncz">0 of 1<\/a>/);
  assert.match(page, /Cluster: in sync/);
  assert.match(page, /Listener: waiting for ACK/);
  assert.match(page, /href="\/debug\/config_dump\?proxyID=a.default"/);
  assert.match(page, /spec.hosts: expected a list<\/li>\s*<\/ul>\s*<\/td>\s*<td><a href="\/debug\/configz">/);
  assert.match(page, /2 proxy pushes \(0.20 a second\)/);
  assert.match(page, /<svg [^>]*aria-label="Proxy pushes per second/);
  assert.match(page, /No config resource is loaded/);
  assert.doesNotMatch(page, /<script|style=/);
});

Deno.test("The debug overview lists the singleton duties: which this replica leads, and who holds each", () => {
  const page = debugOverviewPage(view({
    duties: [
      { duty: "mesh-leader", leading: true, holder: "discovery-a" },
      { duty: "mesh-status-leader", leading: false, holder: "<b>discovery-b</b>" },
      { duty: "mesh-analyze-leader", leading: false, holder: "" },
    ],
  })).text;
  assert.match(page, /Singleton duties led here<\/dt>\s*<dd><a href="#duties">1 of 3<\/a>/);
  assert.match(page, /<code>mesh-leader<\/code><\/td>\s*<td><span class="good">yes<\/span>/);
  assert.match(page, /<code>&lt;b&gt;discovery-b&lt;\/b&gt;<\/code>/);
  assert.match(
    page,
    /mesh-analyze-leader<\/code><\/td>\s*<td><span class="muted">no<\/span><\/td>\s*<td><span class="muted">none/,
  );
});
