import assert from "node:assert/strict";
import { check } from "./_check.ts";
import { validateVirtualService } from "./virtual_service.ts";

const vs = (spec: unknown) => check(validateVirtualService, spec);

function weighted(w1: number, w2: number) {
  return {
    hosts: ["reviews"],
    http: [{
      route: [
        { destination: { host: "reviews", subset: "v1" }, weight: w1 },
        { destination: { host: "reviews", subset: "v2" }, weight: w2 },
      ],
    }],
  };
}

Deno.test("VirtualService accepts valid routing rules", async (t) => {
  await t.step("weighted routes to subsets with matches, timeout, retries and headers", () => {
    const r = vs({
      hosts: ["reviews.prod.svc.cluster.local", "*.reviews.example.com"],
      gateways: ["mesh", "istio-system/public"],
      http: [{
        name: "v2-for-testers",
        match: [{
          uri: { prefix: "/api" },
          headers: { "x-user": { regex: "^tester-[0-9]+$" }, ":authority": { exact: "reviews" } },
          queryParams: { debug: { exact: "1" } },
          port: 9080,
          sourceLabels: { app: "productpage" },
          ignoreUriCase: true,
        }],
        route: [{ destination: { host: "reviews", subset: "v2", port: { number: 9080 } }, weight: 100 }],
        timeout: "1.5s",
        retries: { attempts: 3, perTryTimeout: "500ms", retryOn: "5xx,connect-failure,503" },
        headers: {
          request: { set: { "x-env": "prod" }, remove: ["x-debug"] },
          response: { add: { "x-served-by": "mesh" } },
        },
      }, {
        route: [
          { destination: { host: "reviews", subset: "v1" }, weight: 75 },
          {
            destination: { host: "reviews", subset: "v3" },
            weight: 25,
            headers: { request: { add: { "x-canary": "1" } } },
          },
        ],
      }],
      exportTo: ["."],
    });
    assert.deepEqual(r.messages, []);
    assert.deepEqual(r.warnings, []);
  });

  await t.step("redirect, rewrite, fault, CORS and mirroring", () => {
    const r = vs({
      hosts: ["ratings"],
      http: [
        { match: [{ uri: { exact: "/old" } }], redirect: { uri: "/new", redirectCode: 308 } },
        {
          rewrite: { uri: "/v1" },
          route: [{ destination: { host: "ratings" } }],
          fault: {
            delay: { fixedDelay: "7s", percentage: { value: 0.5 } },
            abort: { httpStatus: 503, percentage: { value: 10 } },
          },
          corsPolicy: {
            allowOrigins: [{ exact: "https://example.com" }],
            allowMethods: ["GET", "POST"],
            maxAge: "24h",
          },
          mirror: { host: "ratings-shadow" },
          mirrorPercentage: { value: 12.5 },
        },
      ],
    });
    assert.deepEqual(r.messages, []);
  });

  await t.step("a root virtual service on a gateway delegates to a virtual service without hosts", () => {
    const root = vs({
      hosts: ["bookinfo.example.com"],
      gateways: ["bookinfo-gateway"],
      http: [{
        match: [{ uri: { prefix: "/reviews" } }],
        delegate: { name: "reviews-routes", namespace: "reviews" },
      }],
    });
    assert.deepEqual(root.messages, []);
    const delegate = vs({ http: [{ route: [{ destination: { host: "reviews" } }] }] });
    assert.deepEqual(delegate.messages, []);
  });

  await t.step("TLS routes by SNI and TCP routes by port", () => {
    const r = vs({
      hosts: ["*.example.com"],
      tls: [{
        match: [{ sniHosts: ["login.example.com"], port: 443 }],
        route: [{ destination: { host: "login" } }],
      }],
      tcp: [{
        match: [{ port: 27017, destinationSubnets: ["10.0.0.0/8"] }],
        route: [{ destination: { host: "mongo" } }],
      }],
    });
    assert.deepEqual(r.messages, []);
  });
});

Deno.test("VirtualService rejects invalid rules with the field path", async (t) => {
  await t.step("weights that do not add up to 100", () => {
    assert.deepEqual(vs(weighted(75, 15)).errors, ["spec.http[0].route"]);
  });

  await t.step("a weight above 100", () => {
    assert.deepEqual(vs(weighted(120, -20)).errors, [
      "spec.http[0].route[0].weight",
      "spec.http[0].route[1].weight",
    ]);
  });

  await t.step("a regex RE2 cannot compile, such as a look-ahead", () => {
    const r = vs({
      hosts: ["*"],
      gateways: ["bookinfo-gateway"],
      http: [{
        match: [{ uri: { regex: "^(?!.secret).*" } }],
        route: [{ destination: { host: "productpage" } }],
      }],
    });
    assert.deepEqual(r.errors, ["spec.http[0].match[0].uri.regex"]);
    assert.match(r.messages[0], /invalid perl operator/);
  });

  await t.step("wildcard host * for the mesh gateway, and overlapping hosts", () => {
    const route = [{ route: [{ destination: { host: "a" } }] }];
    assert.deepEqual(vs({ hosts: ["*"], http: route }).errors, ["spec.hosts[0]"]);
    assert.deepEqual(vs({ hosts: ["*.example.com", "api.example.com"], http: route }).errors, [
      "spec.hosts[1]",
    ]);
    assert.deepEqual(vs({ hosts: ["bad_host!"], http: route }).errors, ["spec.hosts[0]"]);
  });

  await t.step("delegate rules: no gateways in a delegate, no delegation from mesh-only services", () => {
    const delegateWithGateway = vs({ gateways: ["gw"], http: [{ route: [{ destination: { host: "a" } }] }] });
    assert.deepEqual(delegateWithGateway.errors, ["spec.gateways"]);
    const meshRoot = vs({ hosts: ["a"], http: [{ delegate: { name: "a-routes" } }] });
    assert.deepEqual(meshRoot.errors, ["spec.http[0].delegate"]);
    const nested = vs({ http: [{ delegate: { name: "deeper" } }] });
    assert.deepEqual(nested.errors, ["spec.http[0].delegate"]);
    const both = vs({
      hosts: ["a"],
      gateways: ["gw"],
      http: [{ delegate: { name: "Bad_Name" }, route: [{ destination: { host: "a" } }] }],
    });
    assert.deepEqual(both.errors, ["spec.http[0].route", "spec.http[0].delegate.name"]);
    const sourceInDelegate = vs({
      http: [{ match: [{ gateways: ["gw"] }], route: [{ destination: { host: "a" } }] }],
    });
    assert.deepEqual(sourceInDelegate.errors, ["spec.http[0].match[0].gateways"]);
  });

  await t.step("durations below 1ms, with sub-millisecond precision, or not durations", () => {
    const withTimeout = (timeout: unknown) =>
      vs({ hosts: ["a"], http: [{ route: [{ destination: { host: "a" } }], timeout }] });
    assert.deepEqual(withTimeout("0s").errors, ["spec.http[0].timeout"]);
    assert.deepEqual(withTimeout("1.5ms").errors, ["spec.http[0].timeout"]);
    assert.deepEqual(withTimeout("ten seconds").errors, ["spec.http[0].timeout"]);
    assert.deepEqual(withTimeout(10).errors, ["spec.http[0].timeout"]);
  });

  await t.step("unknown and snake_case fields", () => {
    const r = vs({
      hosts: ["a"],
      http: [{ rout: [], route: [{ destination: { host: "a" } }], per_try_timeout: "1s" }],
    });
    assert.deepEqual(r.errors, ["spec.http[0].rout", "spec.http[0].per_try_timeout"]);
    assert.deepEqual(
      vs({ hosts: ["a"], http: [{ route: [{ destination: { host: "a" } }] }], export_to: ["."] }).errors,
      [
        "spec.export_to",
      ],
    );
  });

  await t.step("route with redirect, route without destination, no routes at all", () => {
    const r = vs({
      hosts: ["a"],
      http: [{ route: [{ destination: { host: "a" } }], redirect: { uri: "/x" } }],
    });
    assert.deepEqual(r.errors, ["spec.http[0]"]);
    assert.deepEqual(vs({ hosts: ["a"], http: [{ route: [{ weight: 100 }] }] }).errors, [
      "spec.http[0].route[0].destination",
    ]);
    assert.deepEqual(vs({ hosts: ["a"] }).errors, ["spec"]);
    assert.deepEqual(vs({ hosts: ["a"], http: [{ route: [{ destination: { host: "*" } }] }] }).errors, [
      "spec.http[0].route[0].destination.host",
    ]);
  });

  await t.step("SNI hosts outside the virtual service's hosts, TCP route without destinations", () => {
    const r = vs({
      hosts: ["*.example.com"],
      tls: [{ match: [{ sniHosts: ["login.example.org"] }], route: [{ destination: { host: "login" } }] }],
      tcp: [{ match: [{ destinationSubnets: ["10.0.0.0/33"] }] }],
    });
    assert.deepEqual(r.errors, [
      "spec.tls[0].match[0].sniHosts[0]",
      "spec.tcp[0].match[0].destinationSubnets[0]",
      "spec.tcp[0].route",
    ]);
  });

  await t.step("retries, fault, CORS, mirror and redirect settings out of range", () => {
    const r = vs({
      hosts: ["a"],
      http: [{
        route: [{ destination: { host: "a" } }],
        retries: { attempts: 2, retryOn: "5xx,sometimes" },
        fault: { abort: { httpStatus: 700 } },
        corsPolicy: { allowMethods: ["FETCH"], maxAge: "1.5s" },
        mirror: { host: "b", subset: "V_1" },
        mirrorPercentage: { value: 150 },
      }, { redirect: { redirectCode: 200 } }],
    });
    assert.deepEqual(r.errors, [
      "spec.http[0].retries.retryOn",
      "spec.http[0].fault.abort.httpStatus",
      "spec.http[0].corsPolicy.allowMethods[0]",
      "spec.http[0].corsPolicy.maxAge",
      "spec.http[0].mirror.subset",
      "spec.http[0].mirrorPercentage.value",
      "spec.http[1].redirect",
      "spec.http[1].redirect.redirectCode",
    ]);
  });

  await t.step("exportTo mixing * with namespaces, or using ~", () => {
    const route = [{ route: [{ destination: { host: "a" } }] }];
    assert.deepEqual(vs({ hosts: ["a"], http: route, exportTo: ["*", "ns1"] }).errors, ["spec.exportTo"]);
    assert.deepEqual(vs({ hosts: ["a"], http: route, exportTo: ["~"] }).errors, ["spec.exportTo[0]"]);
    assert.deepEqual(vs({ hosts: ["a"], http: route, exportTo: [".", "default"] }).errors, [
      "spec.exportTo[1]",
    ]);
  });
});

Deno.test("VirtualService warns about valid but suspicious rules", async (t) => {
  await t.step("a catch-all route before other routes", () => {
    const r = vs({
      hosts: ["a"],
      http: [{ route: [{ destination: { host: "a" } }] }, {
        match: [{ uri: { prefix: "/x" } }],
        route: [{ destination: { host: "b" } }],
      }],
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, ["spec.http[0]"]);
  });

  await t.step("deprecated mirrorPercent", () => {
    const r = vs({
      hosts: ["a"],
      http: [{ route: [{ destination: { host: "a" } }], mirror: { host: "b" }, mirrorPercent: 10 }],
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, ["spec.http[0].mirrorPercent"]);
  });
});
