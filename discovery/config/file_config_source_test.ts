import assert from "node:assert/strict";
import { Metrics } from "@mesh/shared/metrics/metrics";
import type { ConfigEvent } from "../model/config_store.ts";
import { FileConfigSource } from "./file_config_source.ts";
import { MemoryConfigStore } from "./memory_config_store.ts";
import { RecordingLogger, replaceFile, virtualService, waitFor } from "./_test_support.ts";

const SERVICES = `apiVersion: networking.mesh.io/v1beta1
kind: ServiceEntry
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews.shop.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 9080, name: http, protocol: HTTP}]
  workloadSelector: {labels: {app: reviews}}
---
apiVersion: networking.mesh.io/v1beta1
kind: WorkloadEntry
metadata: {name: reviews-v1, namespace: shop}
spec: {address: 10.0.0.1, labels: {app: reviews, version: v1}}
`;

function destinationRule(extra = ""): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews.shop.svc.cluster.local
  subsets:
  - name: v1
    labels: {version: v1}
${extra}`;
}

const ROUTES_GOOD = [
  virtualService("reviews", "reviews.shop.svc.cluster.local"),
  destinationRule(),
  virtualService("ratings", "ratings.shop.svc.cluster.local"),
].join("---\n");
const ROUTES_BAD_DR = [
  virtualService("reviews", "reviews.shop.svc.cluster.local"),
  destinationRule("  trafficPolicee: {}\n"),
  virtualService("ratings", "ratings.shop.svc.cluster.local"),
].join("---\n");

function gateway(port: number): string {
  return `apiVersion: networking.istio.io/v1alpha3
kind: Gateway
metadata: {name: ingress, namespace: shop}
spec:
  selector: {app: gw}
  servers:
  - port: {number: ${port}, name: http, protocol: HTTP}
    hosts: ["*"]
`;
}

async function counterValue(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const { values } = await metrics.counter(name).get();
  const match = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return match?.value ?? 0;
}

Deno.test("FileConfigSource loads a live directory, rejects bad documents alone and recovers", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_test_" });
  const logger = new RecordingLogger();
  const metrics = new Metrics("discovery", { version: "test", tag: "test" });
  const store = new MemoryConfigStore();
  const events: ConfigEvent[] = [];
  store.onEvent((e) => events.push(e));
  const source = new FileConfigSource({
    dir,
    store,
    defaultNamespace: "default",
    logger,
    metrics,
    debounceMs: 20,
  });
  const has = (kind: string, name: string) => store.get(kind, "shop", name) !== undefined;
  const drRejections = () => logger.matching("error", "rejected DestinationRule shop/reviews");
  const drFailures = () =>
    counterValue(metrics, "config_validation_failed", {
      group: "networking.mesh.io",
      version: "v1beta1",
      resource: "destinationrules",
      reason: "invalid_config",
    });
  try {
    await Deno.writeTextFile(`${dir}/services.yaml`, SERVICES);
    await source.start();

    await t.step("the first load fills the store and marks it synced", () => {
      assert.equal(store.synced, true);
      assert.ok(has("ServiceEntry", "reviews") && has("WorkloadEntry", "reviews-v1"));
      assert.deepEqual(source.rejected(), []);
    });

    await t.step("a file with one bad document among good ones loads the good ones", async () => {
      await replaceFile(`${dir}/routes.yaml`, ROUTES_BAD_DR);
      // The store is written in slices before the reload reports its rejections: wait for both.
      await waitFor(
        () => has("VirtualService", "ratings") && source.rejected().length > 0,
        "the ratings VirtualService and the rejection",
      );
      assert.ok(has("VirtualService", "reviews"));
      assert.equal(has("DestinationRule", "reviews"), false);
      const [rejected] = source.rejected();
      assert.equal(rejected.file, `${dir}/routes.yaml`);
      assert.equal(rejected.line, 10);
      assert.equal(rejected.kind, "DestinationRule");
      assert.match(
        rejected.errors[0],
        /routes\.yaml:18: spec\.trafficPolicee: unknown field "trafficPolicee"/,
      );
      assert.equal(
        await counterValue(metrics, "discovery_total_rejected_configs", { type: "DestinationRule" }),
        1,
      );
      assert.equal(await drFailures(), 1);
      assert.equal(drRejections().length, 1);
    });

    await t.step(
      "unrelated reloads neither repeat the rejection's log line and count nor emit events",
      async () => {
        const before = { reloads: source.reloads, events: events.length };
        await replaceFile(`${dir}/routes.yaml`, ROUTES_BAD_DR);
        await waitFor(() => source.reloads > before.reloads, "a reload");
        await source.reload();
        assert.equal(drRejections().length, 1);
        assert.equal(await drFailures(), 1);
        assert.equal(events.length, before.events);
      },
    );

    await t.step("fixing the document loads it and clears the rejection", async () => {
      await replaceFile(`${dir}/routes.yaml`, ROUTES_GOOD);
      await waitFor(
        () => has("DestinationRule", "reviews") && source.rejected().length === 0,
        "the fixed DestinationRule and no rejection",
      );
    });

    await t.step("breaking it again keeps its last good version and counts the new rejection", async () => {
      await replaceFile(`${dir}/routes.yaml`, ROUTES_BAD_DR);
      await waitFor(() => source.rejected().length === 1, "the new rejection");
      assert.ok(has("DestinationRule", "reviews"));
      assert.equal(await drFailures(), 2);
      assert.equal(drRejections().length, 2);
      assert.ok(source.warnings().some((w) => w.message.includes("still serving its last good version")));
    });

    await t.step("a YAML syntax error mid-file keeps every resource the file had", async () => {
      const half = ROUTES_GOOD.slice(0, ROUTES_GOOD.indexOf("labels: {version") + 12);
      await replaceFile(`${dir}/routes.yaml`, half);
      await waitFor(
        () => source.rejected().some((r) => r.errors[0].includes("YAML syntax error")),
        "a syntax error",
      );
      assert.ok(
        has("VirtualService", "reviews") && has("DestinationRule", "reviews") &&
          has("VirtualService", "ratings"),
      );
      assert.equal(
        await counterValue(metrics, "config_validation_failed", {
          resource: "unknown",
          reason: "yaml_decode_error",
        }),
        1,
      );
    });

    await t.step("a complete file without a document removes that resource", async () => {
      await replaceFile(
        `${dir}/routes.yaml`,
        [virtualService("reviews", "reviews.shop.svc.cluster.local"), destinationRule()].join("---\n"),
      );
      await waitFor(() => !has("VirtualService", "ratings"), "the ratings VirtualService to go");
      assert.ok(has("VirtualService", "reviews") && has("DestinationRule", "reviews"));
      assert.deepEqual(source.rejected(), []);
    });

    await t.step("files in new nested directories are picked up, changed and removed", async () => {
      await Deno.mkdir(`${dir}/teams/shop`, { recursive: true });
      await replaceFile(`${dir}/teams/shop/gateway.yaml`, gateway(80));
      await waitFor(
        () => has("Gateway", "ingress") && source.origin("Gateway", "shop", "ingress") !== undefined,
        "the nested Gateway",
      );
      assert.deepEqual(source.origin("Gateway", "shop", "ingress"), {
        file: `${dir}/teams/shop/gateway.yaml`,
        line: 1,
      });
      await replaceFile(`${dir}/teams/shop/gateway.yaml`, gateway(8080));
      const port = () =>
        (store.get("Gateway", "shop", "ingress")?.spec as { servers: { port: { number: number } }[] })
          ?.servers[0].port.number;
      await waitFor(() => port() === 8080, "the Gateway's new port");
      await Deno.remove(`${dir}/teams`, { recursive: true });
      await waitFor(() => !has("Gateway", "ingress"), "the Gateway to go with its directory");
    });

    await t.step(
      "a duplicate in an earlier file name wins, with a warning, until it is removed",
      async () => {
        const duplicate = SERVICES.split("---\n")[0].replace(
          "reviews.shop.svc.cluster.local",
          "reviews.other.example.com",
        );
        await replaceFile(`${dir}/a-duplicate.yaml`, duplicate);
        const hosts = () =>
          (store.get("ServiceEntry", "shop", "reviews")?.spec as { hosts: string[] }).hosts[0];
        await waitFor(() => hosts() === "reviews.other.example.com", "the duplicate to win");
        assert.ok(
          source.warnings().some((w) =>
            w.file === `${dir}/services.yaml` && w.message.startsWith("duplicate")
          ),
        );
        assert.equal(logger.matching("warn", "duplicate ServiceEntry shop/reviews").length, 1);
        await Deno.remove(`${dir}/a-duplicate.yaml`);
        await waitFor(() => hosts() === "reviews.shop.svc.cluster.local", "the original to come back");
      },
    );

    await t.step("deleting a file removes its resources", async () => {
      await Deno.remove(`${dir}/routes.yaml`);
      await waitFor(
        () => !has("VirtualService", "reviews") && !has("DestinationRule", "reviews"),
        "the routes to go",
      );
      assert.ok(has("ServiceEntry", "reviews"));
      assert.equal(
        events.filter((e) => e.type === "delete" && e.resource.gvk.kind === "DestinationRule").length,
        1,
      );
    });
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource applies the default namespace and fails to start on a missing directory", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_test_" });
  try {
    await t.step("documents without a namespace get the configured default", async () => {
      await Deno.writeTextFile(
        `${dir}/vs.json`,
        JSON.stringify({
          apiVersion: "networking.mesh.io/v1beta1",
          kind: "VirtualService",
          metadata: { name: "x" },
          spec: { hosts: ["x.example.com"], http: [{ route: [{ destination: { host: "x.example.com" } }] }] },
        }),
      );
      const store = new MemoryConfigStore();
      const source = new FileConfigSource({ dir, store, defaultNamespace: "team-a" });
      await source.start();
      await source.stop();
      assert.ok(store.get("VirtualService", "team-a", "x"));
    });

    await t.step("a directory that does not exist is an error naming it", async () => {
      const source = new FileConfigSource({
        dir: `${dir}/missing`,
        store: new MemoryConfigStore(),
        defaultNamespace: "default",
      });
      await assert.rejects(() => source.start(), /Cannot read config directory ".*missing" \(--configDir\)/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileConfigSource writes a reload's resources as one store batch, so a push waits for the last", async () => {
  const dir = await Deno.makeTempDir({ prefix: "file_config_source_test_" });
  const many = (prefix: string) =>
    Array.from({ length: 200 }, (_, i) => virtualService(`${prefix}-${i}`, `h${i}.example`)).join("---\n");
  const store = new MemoryConfigStore();
  const writing: boolean[] = [];
  store.onEvent(() => writing.push(store.writing ?? false));
  const source = new FileConfigSource({ dir, store, defaultNamespace: "default", debounceMs: 20 });
  try {
    await Deno.writeTextFile(`${dir}/first.yaml`, many("first"));
    await source.start();
    assert.equal(writing.length, 200);
    assert.ok(writing.every((w) => w), "the whole tree's resources are written inside one batch");
    assert.equal(store.writing, false);

    await replaceFile(`${dir}/second.yaml`, many("second"));
    await waitFor(() => store.list("VirtualService").length === 400 && !store.writing, "the second file");
    assert.equal(writing.length, 400);
    assert.ok(writing.every((w) => w), "a named file's resources are written inside one batch");
  } finally {
    await source.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
