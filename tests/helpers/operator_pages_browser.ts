/// <reference lib="dom" />
/**
 * ControlZ's pages and the debug overview in a real browser (headless Chromium driven by playwright-core)
 * against the real `mesh-discovery discovery`: a scope's level changed from the page, a connected proxy, its
 * NACK and a refused config file as an operator sees them. One browser serves every step; a failing step
 * leaves a screenshot under /tmp. Run by `tests/operator_pages_e2e_test.ts` in a `deno test` of its own:
 * playwright-core probes paths under /proc when loaded, which Deno grants only with every permission.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import { TYPE_URL } from "../../proto/type_urls.ts";
import { TestAdsClient, testNode } from "../../discovery/xds/_test_ads_client.ts";
import { waitFor } from "../../shared/testing/wait_for.ts";
import { discoveryAddresses, discoveryArgs, startProgram } from "./programs.ts";

const REFUSED = `apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata:
  name: "<script>alert(1)</script>"
  namespace: default
spec:
  hosts: 42
`;

/** Runs `fn` as a step; when it fails, saves what the page showed to /tmp first. */
async function step(t: Deno.TestContext, page: Page, name: string, fn: () => Promise<void>): Promise<void> {
  const ok = await t.step(name, async () => {
    try {
      await fn();
    } catch (error) {
      const file = `/tmp/operator_pages_${name.replace(/[^a-z0-9]+/gi, "_").slice(0, 60)}.png`;
      await page.screenshot({ path: file, fullPage: true }).catch(() => {});
      throw new Error(`${(error as Error).message} (screenshot: ${file})`, { cause: error });
    }
  });
  if (!ok) throw new Error(`Step "${name}" failed`);
}

Deno.test({
  name: "An operator reads ControlZ and the debug overview in a browser and changes a log level there",
  // playwright-core and grpc-js keep timers and sockets of their own between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "operator_pages_e2e_" });
    await Deno.writeTextFile(`${dir}/refused.yaml`, REFUSED);
    const addresses = discoveryAddresses();
    const server = startProgram(
      "mesh-discovery",
      discoveryArgs(addresses, ["--registries", "Mock", "--configDir", dir, "--log_as_json"]),
    );
    const ctrlz = `http://127.0.0.1:${addresses.ctrlzPort}`;
    const debug = `http://${addresses.httpAddr}`;
    let browser: Browser | undefined;
    let proxy: TestAdsClient | undefined;
    try {
      await server.waitFor(/"msg":"discovery server started"/);
      browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      const errors: string[] = [];
      // The browser asks every server for /favicon.ico on its own; the pages load nothing that is missing.
      page.on(
        "console",
        (m) => m.type() === "error" && !m.location().url.endsWith("/favicon.ico") && errors.push(m.text()),
      );
      page.on("pageerror", (e) => errors.push(e.message));

      await step(t, page, "every ControlZ page opens, fits a phone and breaks no policy", async () => {
        for (
          const [path, heading] of [
            ["/", "mesh-discovery"],
            ["/scopez/", "Logging scopes"],
            ["/memz/", "Memory"],
            ["/procz/", "Process"],
            ["/envz/", "Environment"],
            ["/argsz/", "Arguments"],
            ["/metricz/", "Metrics"],
            ["/versionz/", "Version"],
          ]
        ) {
          const response = await page.goto(ctrlz + path);
          assert.equal(response?.status(), 200, path);
          assert.equal(await page.textContent("h1"), heading);
          const wide = await page.evaluate(() =>
            document.documentElement.scrollWidth > globalThis.innerWidth + 1
          );
          assert.equal(wide, false, `${path} is wider than a phone`);
        }
        assert.match((await page.textContent("body"))!, /Version/);
        await page.goto(ctrlz + "/memz/");
        await page.waitForFunction(() =>
          document.querySelector('[data-series="heapUsed"]')?.getAttribute("d")
        );
        await page.goto(ctrlz + "/metricz/");
        await page.fill("#metric-query", "discovery_xds");
        assert.match((await page.textContent("#metric-count"))!, /^\d+ samples$/);
        const shown = await page.$$eval(
          ".metric-line:not([hidden])",
          (lines) => lines.map((l) => l.textContent),
        );
        assert.ok(shown.length > 0 && shown.every((l) => l!.includes("discovery_xds")), shown.join("\n"));
        assert.deepEqual(errors, []);
      });

      await step(t, page, "with JavaScript off the pages still show their data", async () => {
        const context = await browser!.newContext({ javaScriptEnabled: false });
        try {
          const plain = await context.newPage();
          await plain.goto(ctrlz + "/memz/");
          assert.match((await plain.textContent('[data-mem="rss"]'))!, /^\d+(\.\d)? (KiB|MiB|GiB)$/);
          await plain.goto(ctrlz + "/metricz/");
          await plain.fill("#metric-query", "discovery_xds");
          await plain.click('form[role="search"] button');
          await plain.waitForURL(/\?q=discovery_xds$/);
          const lines = await plain.$$eval(".metric-line", (all) => all.map((l) => l.textContent!));
          assert.ok(lines.length > 0 && lines.every((l) => l.includes("discovery_xds")), lines.join("\n"));
          await plain.goto(ctrlz + "/scopez/");
          assert.equal(await plain.inputValue("#scope-ads-output"), "info");
        } finally {
          await context.close();
        }
      });

      await step(
        t,
        page,
        "a scope's level changed on the page is served and shows in the next log line",
        async () => {
          await page.goto(ctrlz + "/scopez/");
          await page.selectOption("#scope-ads-output", "debug");
          await page.click('#scope-ads button[type="submit"]');
          await page.waitForSelector("#scope-status.good");
          assert.match((await page.textContent("#scope-status"))!, /Scope ads: output level debug/);
          const scope = await (await fetch(`${ctrlz}/scopej/ads`)).json();
          assert.equal(scope.output_level, "debug");
          proxy = TestAdsClient.sotw(Number(addresses.grpcAddr.split(":")[1]));
          proxy.send({
            node: testNode("sidecar~10.1.0.7~web-1.default~default.svc.cluster.local", {
              MESH_VERSION: "1.9.9",
              CLUSTER_ID: "Kubernetes",
            }),
            type_url: TYPE_URL.cluster,
          });
          await server.waitFor(
            /"level":"debug","scope":"ads"[^\n]*"msg":"sent ADS response"|"msg":"sent ADS response"[^\n]*"level":"debug"/,
          );
        },
      );

      await step(
        t,
        page,
        "a level or scope that does not exist is refused with a message on the page",
        async () => {
          await page.goto(ctrlz + "/scopez/");
          await page.evaluate(() => {
            const select = document.querySelector<HTMLSelectElement>("#scope-ads-output")!;
            select.add(new Option("loud", "loud", true, true));
          });
          await page.click('#scope-ads button[type="submit"]');
          await page.waitForSelector("#scope-status.bad");
          assert.match(
            (await page.textContent("#scope-status"))!,
            /Not changed: Invalid output_level "loud"/,
          );
          await page.evaluate(() =>
            document.querySelector<HTMLFormElement>("#scope-ads")!.dataset.scope = "nope"
          );
          await page.click('#scope-ads button[type="submit"]');
          await page.waitForFunction(() =>
            /Unknown log scope/.test(document.getElementById("scope-status")!.textContent!)
          );
          assert.equal((await (await fetch(`${ctrlz}/scopej/ads`)).json()).output_level, "debug");
          // The refusals above are logged by the browser as failed loads; they were meant.
          errors.length = 0;
        },
      );

      await step(t, page, "a page of another origin cannot change a level", async () => {
        await page.goto(debug + "/debug/overview");
        // The browser sends the PUT only after a CORS preflight, which ControlZ does not answer with consent;
        // the server's own Origin check (unit-tested in discovery/ctrlz/) refuses what gets through anyway.
        const outcome = await page.evaluate(async (url) => {
          try {
            const r = await fetch(url, { method: "PUT", body: '{"output_level":"none"}' });
            return `answered ${r.status}`;
          } catch (error) {
            return (error as Error).name;
          }
        }, `${ctrlz}/scopej/ads`);
        assert.equal(outcome, "TypeError");
        errors.length = 0;
        assert.equal((await (await fetch(`${ctrlz}/scopej/ads`)).json()).output_level, "debug");
      });

      await step(
        t,
        page,
        "the overview lists the proxy, its NACK text and the refused file with its reason",
        async () => {
          const first = await proxy!.next();
          proxy!.send({
            type_url: TYPE_URL.cluster,
            version_info: "",
            response_nonce: first.nonce,
            error_detail: { code: 3, message: "cluster <b>outbound|80||web</b> has no endpoints I accept" },
          });
          await waitFor(
            async () => {
              const sync = await (await fetch(`${debug}/debug/syncz`)).json();
              return JSON.stringify(sync).includes("lastNack");
            },
            "the NACK in /debug/syncz",
            15_000,
            100,
          );
          await page.goto(debug + "/debug/overview");
          assert.equal(await page.textContent("h1"), "Debug overview");
          const row = page.locator('tr[data-proxy="web-1.default"]');
          assert.match((await row.textContent())!, /sidecar\s+1\.9\.9\s+Kubernetes/);
          assert.match((await row.textContent())!, /CDS: rejected \(NACK\)/);
          assert.equal(
            await row.locator("q.nack").textContent(),
            "cluster <b>outbound|80||web</b> has no endpoints I accept",
          );
          assert.equal(await row.locator('a[href="/debug/syncz"]').count(), 1);
          const refused = await page.textContent("#rejected-table");
          assert.match(refused!, /refused\.yaml:1/);
          assert.match(refused!, /<script>alert\(1\)<\/script>/);
          assert.match(refused!, /hosts/);
          assert.equal(await page.locator("#rejected-table script").count(), 0);
          assert.equal(await page.locator("svg[role=img]").count(), 2);
          assert.deepEqual(errors, []);
        },
      );
    } finally {
      proxy?.close();
      await browser?.close();
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
