import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { differInHttpRoutesAlone, HttpRoutesAloneMarker } from "./http_routes_alone.ts";
import { configKey, pushRequest } from "./push_request.ts";
import { networking, world } from "./_test_support.ts";
import type { PushContextInputs } from "./push_context.ts";

const DB = "db.a.svc.cluster.local";
const WEB = "web.a.svc.cluster.local";

function web(spec: Record<string, unknown> = {}): Resource {
  return networking("VirtualService", "a", "web", {
    hosts: ["web"],
    http: [{
      route: [{ destination: { host: WEB, subset: "v1" }, weight: 90 }, {
        destination: { host: WEB, subset: "v2" },
        weight: 10,
      }],
    }],
    ...spec,
  });
}

function db(tcpWeight = 100): Resource {
  return networking("VirtualService", "a", "db", {
    hosts: [DB],
    tcp: [{ route: [{ destination: { host: DB, port: { number: 5432 } }, weight: tcpWeight }] }],
  });
}

/** A delegate (no hosts) whose HTTP routes `web` may take. */
function delegate(prefix = "/v1"): Resource {
  return networking("VirtualService", "a", "web-delegate", {
    http: [{ match: [{ uri: { prefix } }], route: [{ destination: { host: WEB } }] }],
  });
}

/** Whether changing the base mesh by `edit` leaves every VirtualService alike but for HTTP routes. */
function alike(
  edit: (w: ReturnType<typeof world>) => void,
  inputs: Partial<PushContextInputs> = {},
): boolean {
  const w = world();
  w.apply(web(), db(), delegate());
  const before = w.push(inputs);
  edit(w);
  return differInHttpRoutesAlone(before.virtualServiceIndex, w.push(inputs).virtualServiceIndex);
}

Deno.test("VirtualServices differ in HTTP routes alone exactly when nothing else a listener reads moved", async (t) => {
  const cases: [string, (w: ReturnType<typeof world>) => void, boolean][] = [
    ["nothing changed", () => {}, true],
    [
      "HTTP weights",
      (w) =>
        w.apply(web({
          http: [{
            route: [{ destination: { host: WEB, subset: "v1" }, weight: 50 }, {
              destination: { host: WEB, subset: "v2" },
              weight: 50,
            }],
          }],
        })),
      true,
    ],
    [
      "an HTTP route with a match, a mirror and a timeout",
      (w) =>
        w.apply(web({
          http: [{
            match: [{ headers: { x: { exact: "1" } } }],
            route: [{ destination: { host: WEB } }],
            mirror: { host: DB },
            timeout: "3s",
          }, { route: [{ destination: { host: WEB } }] }],
        })),
      true,
    ],
    ["labels and annotations only", (w) => {
      const r = web();
      w.apply({ ...r, meta: { ...r.meta, labels: { x: "1" }, annotations: { note: "y" } } });
    }, true],
    ["a delegate's HTTP routes", (w) => w.apply(delegate("/v2")), true],
    ["a TCP route's weight", (w) => w.apply(db(50)), false],
    ["a TCP route added", (w) => w.apply(web({ tcp: [{ route: [{ destination: { host: WEB } }] }] })), false],
    [
      "a TLS route added",
      (w) =>
        w.apply(web({
          tls: [{ match: [{ sniHosts: ["web"] }], route: [{ destination: { host: WEB } }] }],
        })),
      false,
    ],
    ["its hosts", (w) => w.apply(web({ hosts: ["web", "www"] })), false],
    ["its gateways", (w) => w.apply(web({ gateways: ["edge"] })), false],
    ["its exportTo", (w) => w.apply(web({ exportTo: ["."] })), false],
    [
      "an HTTP-only VirtualService added",
      (w) =>
        w.apply(networking("VirtualService", "a", "new", {
          hosts: ["new"],
          http: [{ route: [{ destination: { host: WEB } }] }],
        })),
      false,
    ],
    ["an HTTP-only VirtualService deleted", (w) => w.store.delete("VirtualService", "a", "web"), false],
    [
      "a delegate becoming a VirtualService of its own (it takes hosts)",
      (w) => w.apply(networking("VirtualService", "a", "web-delegate", { hosts: ["other"], http: [] })),
      false,
    ],
  ];
  for (const [what, edit, expected] of cases) {
    await t.step(what, () => assert.equal(alike(edit), expected));
  }
  await t.step(
    "an HTTP route turning delegation on, which drops the VirtualService with delegation off",
    () => {
      const delegating = (w: ReturnType<typeof world>) =>
        w.apply(web({ http: [{ delegate: { name: "web-delegate", namespace: "a" } }] }));
      assert.equal(alike(delegating, { enableVirtualServiceDelegate: true }), true);
      assert.equal(alike(delegating, { enableVirtualServiceDelegate: false }), false);
    },
  );
});

Deno.test("A request is marked as changing HTTP routes alone only against every snapshot since listeners were rebuilt", async (t) => {
  const w = world();
  w.apply(web(), db());
  const marker = new HttpRoutesAloneMarker(w.push().virtualServiceIndex);
  const vsChange = (name: string) => pushRequest(true, "config", [configKey("VirtualService", "a", name)], 0);
  const drChange = pushRequest(true, "config", [configKey("DestinationRule", "a", "db")], 0);
  const publish = (request: ReturnType<typeof pushRequest>) =>
    marker.published(request, w.push().virtualServiceIndex).httpRoutesAlone === true;
  const http = (weight: number) =>
    web({
      http: [{
        route: [{ destination: { host: WEB, subset: "v1" }, weight }, {
          destination: { host: WEB, subset: "v2" },
          weight: 100 - weight,
        }],
      }],
    });

  await t.step("an HTTP route edit is marked", () => {
    w.apply(http(50));
    assert.equal(publish(vsChange("web")), true);
  });

  await t.step("a TCP edit is not, and the next HTTP route edit is again", () => {
    w.apply(db(40));
    assert.equal(publish(vsChange("db")), false);
    w.apply(http(60));
    assert.equal(publish(vsChange("web")), true);
  });

  await t.step("a TCP edit a snapshot took in before its event arrived is not, when its event comes", () => {
    w.apply(db(30));
    assert.equal(publish(drChange), false, "a request naming no VirtualService is never marked");
    // Its own snapshot is alike the previous one, which already held the edit: still unmarked.
    assert.equal(publish(vsChange("db")), false);
  });

  await t.step("nor one undone before its event came, as listeners may have been built in between", () => {
    w.apply(db(20));
    assert.equal(publish(drChange), false);
    w.apply(db(30));
    assert.equal(publish(vsChange("db")), false);
    w.apply(http(70));
    assert.equal(publish(vsChange("web")), true, "a run starts again from there");
  });
});
