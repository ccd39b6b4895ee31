import assert from "node:assert/strict";
import type { Resource } from "@mesh/shared/config/resource";
import { SECURITY_GROUP } from "@mesh/shared/config/kinds";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { PushContext } from "../push/push_context.ts";
import { mayAffect, type XdsGenerator } from "./generator.ts";
import { grpcGenerators } from "./grpc_generators.ts";
import { greeterSplit, grpcProxy, networking, richWorld, run, type World } from "./_test_world.ts";

const SHORT: Record<string, string> = {
  [TYPE_URL.cluster]: "CDS",
  [TYPE_URL.endpoint]: "EDS",
  [TYPE_URL.listener]: "LDS",
  [TYPE_URL.route]: "RDS",
};

const client = grpcProxy("example", { app: "client" });

function security(kind: string, name: string, spec: unknown): Resource {
  const r = networking(kind, "example", name, spec);
  return { ...r, gvk: { ...r.gvk, group: SECURITY_GROUP } };
}

/** One change of each kind a gRPC client might be thought to see. */
const CHANGES: Record<string, (world: World) => void> = {
  VirtualService: (w) => w.apply(greeterSplit(10, 90)),
  DestinationRule: (w) =>
    w.apply(networking("DestinationRule", "example", "greeter", {
      host: "greeter",
      trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } },
      subsets: [{ name: "v1", labels: { version: "v1" } }, { name: "v3", labels: { version: "v3" } }],
    })),
  Gateway: (w) =>
    w.apply(networking("Gateway", "example", "edge", {
      selector: { app: "ingress" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    })),
  PeerAuthentication: (w) => w.apply(security("PeerAuthentication", "strict", { mtls: { mode: "STRICT" } })),
  AuthorizationPolicy: (w) =>
    w.apply(security("AuthorizationPolicy", "deny-all", { action: "DENY", rules: [{}] })),
  RequestAuthentication: (w) =>
    w.apply(security("RequestAuthentication", "jwt", {
      jwtRules: [{ issuer: "https://issuer.example.com", jwksUri: "https://issuer.example.com/jwks" }],
    })),
  Sidecar: (w) =>
    w.apply(networking("Sidecar", "example", "default", {
      egress: [{ hosts: ["./greeter.example.svc.cluster.local"] }],
    })),
};

/** Every resource a wildcard request of the generator's type gives the client, with its bytes. */
function generated(generator: XdsGenerator<PushContext>, push: PushContext): string {
  const { names, bytes } = run(generator, client, push);
  return JSON.stringify(names.map((name) => [name, [...bytes.get(name)!]]));
}

/** The gRPC types a change of `kind` makes the server regenerate, in registration order. */
function regenerated(kind: string): string[] {
  return grpcGenerators().filter((g) => mayAffect(g, client, new Set([kind]))).map((g) => SHORT[g.typeUrl]);
}

Deno.test("A config change regenerates, for a proxyless gRPC client, only the types that read its kind", () => {
  const expected: Record<string, string[]> = {
    VirtualService: ["RDS"],
    DestinationRule: ["CDS", "EDS", "RDS"],
    Gateway: [],
    Secret: [],
    PeerAuthentication: [],
    AuthorizationPolicy: [],
    RequestAuthentication: [],
    WorkloadEntry: [],
    Sidecar: ["CDS", "EDS", "LDS", "RDS"],
    ServiceEntry: ["CDS", "EDS", "LDS", "RDS"],
    EnvoyFilter: ["CDS", "EDS", "LDS", "RDS"],
  };
  for (const [kind, types] of Object.entries(expected)) assert.deepEqual(regenerated(kind), types, kind);
});

Deno.test("Unknown changes, or none named, regenerate every gRPC type", () => {
  for (const generator of grpcGenerators()) {
    assert.ok(mayAffect(generator, client, undefined));
    assert.ok(mayAffect(generator, client, new Set()));
  }
});

Deno.test("A gRPC type a change's kind is declared not to affect generates the same bytes after it", async (t) => {
  for (const [kind, change] of Object.entries(CHANGES)) {
    await t.step(kind, () => {
      const beforePush = richWorld().push();
      const after = richWorld();
      change(after);
      const afterPush = after.push();
      let changedSomewhere = false;
      for (const generator of grpcGenerators()) {
        const same = generated(generator, beforePush) === generated(generator, afterPush);
        changedSomewhere ||= !same;
        if (mayAffect(generator, client, new Set([kind]))) continue;
        assert.ok(same, `a ${kind} change is declared not to affect gRPC ${SHORT[generator.typeUrl]}`);
      }
      // A kind some type reads must be seen by the change made of it, or the test could not tell.
      if (regenerated(kind).length > 0) {
        assert.ok(changedSomewhere, `the ${kind} change is seen by some type`);
      }
    });
  }
});
