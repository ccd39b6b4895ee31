import assert from "node:assert/strict";
import { soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { IngressStatusSyncer, loadBalancerStatus } from "./ingress_status.ts";

Deno.test("loadBalancerStatus names IPs as ip and names as hostname, each once, sorted", () => {
  assert.deepEqual(loadBalancerStatus(["lb.example.com", "203.0.113.7", "203.0.113.7", "2001:db8::1"]), {
    ingress: [{ ip: "2001:db8::1" }, { ip: "203.0.113.7" }, { hostname: "lb.example.com" }],
  });
});

Deno.test("IngressStatusSyncer writes each Ingress's load balancer once per change of the gateway's addresses", () => {
  const writes: string[] = [];
  let addresses = ["203.0.113.7"];
  const syncer = new IngressStatusSyncer({
    writer: {
      writeField: (ref, field, value) => writes.push(`${ref.name} ${field} ${JSON.stringify(value)}`),
    },
    gate: soleLeader("mesh-leader"),
    ingresses: () => [{ namespace: "shop", name: "web" }, { namespace: "shop", name: "api" }],
    addresses: () => addresses,
  });
  const stop = syncer.start();
  assert.deepEqual(writes, [
    'web loadBalancer {"ingress":[{"ip":"203.0.113.7"}]}',
    'api loadBalancer {"ingress":[{"ip":"203.0.113.7"}]}',
  ]);
  syncer.sync();
  assert.equal(writes.length, 2, "unchanged addresses are not written again");
  addresses = ["203.0.113.8"];
  syncer.sync();
  assert.equal(writes.length, 4);
  stop();
  addresses = ["203.0.113.9"];
  syncer.sync();
  assert.equal(writes.length, 4, "nothing is written once the duty is given up");
});
