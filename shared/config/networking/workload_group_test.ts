import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateWorkloadGroup } from "./workload_group.ts";

const wg = (spec: unknown) => check(validateWorkloadGroup, spec);

Deno.test("WorkloadGroup accepts templates without address and probes", async (t) => {
  await t.step("metadata and a template", () => {
    const r = wg({
      metadata: {
        labels: { "app.kubernetes.io/name": "reviews", "app.kubernetes.io/version": "1.3.4" },
        annotations: { note: "vm" },
      },
      template: { ports: { grpc: 3550, http: 8080 }, serviceAccount: "default" },
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("HTTP, TCP and exec readiness probes", () => {
    const template = { serviceAccount: "default" };
    const http = {
      httpGet: { path: "/ready", port: 8080, scheme: "HTTP", httpHeaders: [{ name: "x-probe", value: "1" }] },
    };
    assert.deepEqual(
      wg({ template, probe: { periodSeconds: 5, initialDelaySeconds: 1, ...http } }).messages,
      [],
    );
    assert.deepEqual(wg({ template, probe: { tcpSocket: { port: 3306 } } }).messages, []);
    assert.deepEqual(wg({ template, probe: { exec: { command: ["cat", "/tmp/ready"] } } }).messages, []);
  });
});

Deno.test("WorkloadGroup rejects invalid groups with the field path", async (t) => {
  await t.step("invalid metadata labels and a missing template", () => {
    const r = wg({ metadata: { labels: { app: "reviews", ".": "~" } } });
    assert.deepEqual(r.errors, ['spec.metadata.labels["."]', 'spec.metadata.labels["."]', "spec.template"]);
  });

  await t.step("template fields are still checked", () => {
    assert.deepEqual(wg({ template: { ports: { http: 99999 }, labels: { "a/b/c": "x" } } }).errors, [
      "spec.template.ports.http",
      'spec.template.labels["a/b/c"]',
    ]);
  });

  await t.step("probes with no or two kinds, bad ports, negative timing, empty command", () => {
    const template = {};
    assert.deepEqual(wg({ template, probe: { periodSeconds: 5 } }).errors, ["spec.probe"]);
    assert.deepEqual(wg({ template, probe: { tcpSocket: { port: 1 }, exec: { command: ["x"] } } }).errors, [
      "spec.probe",
    ]);
    assert.deepEqual(wg({ template, probe: { timeoutSeconds: -1, httpGet: { port: 0 } } }).errors, [
      "spec.probe.timeoutSeconds",
      "spec.probe.httpGet.port",
    ]);
    assert.deepEqual(wg({ template, probe: { exec: { command: [] } } }).errors, ["spec.probe.exec.command"]);
  });
});

Deno.test("WorkloadGroup warns that a template address is ignored", () => {
  const r = wg({ template: { address: "1.2.3.4" } });
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, ["spec.template.address"]);
});
