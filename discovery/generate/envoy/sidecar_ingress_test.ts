import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";

type Obj = Record<string, unknown>;

function push() {
  return new World().apply(
    ...envoyResources(),
    networking("Sidecar", "example", "ratings", {
      workloadSelector: { labels: { app: "ratings" } },
      ingress: [
        { port: { number: 9080, protocol: "HTTP", name: "http" }, defaultEndpoint: "127.0.0.1:8080" },
        { port: { number: 9443, protocol: "TCP", name: "tcp" }, defaultEndpoint: "0.0.0.0:9444" },
        {
          port: { number: 9500, protocol: "GRPC", name: "grpc" },
          defaultEndpoint: "unix:///var/run/app.sock",
        },
      ],
      egress: [{ hosts: ["./*"] }],
    }),
  ).push();
}

Deno.test("A Sidecar's ingress listeners replace the inbound ports and send each to its default endpoint", () => {
  const proxy = envoySidecar("example", "10.0.2.1", { app: "ratings" });
  const p = push();
  const cds = run(envoyCdsGenerator, proxy, p);
  const endpointOf = (name: string) =>
    JSON.stringify(((cds.byName.get(name)!.load_assignment as Obj).endpoints as Obj[])[0]);
  assert.match(endpointOf("inbound|9080||"), /"address":"127.0.0.1","port_value":8080/);
  assert.match(
    endpointOf("inbound|9443||"),
    /"address":"10.0.2.1","port_value":9444/,
    "0.0.0.0 is the workload's IP",
  );
  assert.match(endpointOf("inbound|9500||"), /"pipe":\{"path":"\/var\/run\/app.sock"\}/);
  const lds = run(envoyLdsGenerator, proxy, p);
  const chains = (lds.byName.get("virtualInbound")!.filter_chains as Obj[]).map((c) => String(c.name));
  assert.ok(chains.includes("inbound|9080|mtls") && chains.includes("inbound|9443|plaintext"), chains.join());
  const ports = new Set(chains.filter((c) => c.startsWith("inbound|")).map((c) => c.split("|")[1]));
  assert.deepEqual([...ports].sort(), ["9080", "9443", "9500"], "only the declared ports");
  const http = (lds.byName.get("virtualInbound")!.filter_chains as Obj[]).find((c) =>
    c.name === "inbound|9080|plaintext"
  )!;
  assert.match(JSON.stringify(http.filters), /http_connection_manager/);
  const tcp = (lds.byName.get("virtualInbound")!.filter_chains as Obj[]).find((c) =>
    c.name === "inbound|9443|plaintext"
  )!;
  assert.match(JSON.stringify(tcp.filters), /tcp_proxy/);
  for (const [name, encoded] of [...cds.bytes, ...lds.bytes]) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
});

Deno.test("Without ingress listeners, inbound ports still come from the services the workload backs", () => {
  const proxy = envoySidecar("example", "10.0.2.1", { app: "other" });
  const cds = run(envoyCdsGenerator, proxy, push());
  assert.ok(cds.byName.has("inbound|9080||"), "the ratings WorkloadEntry at 10.0.2.1 serves 9080");
  assert.ok(!cds.byName.has("inbound|9443||"));
});
