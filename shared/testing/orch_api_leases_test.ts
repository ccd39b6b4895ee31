import assert from "node:assert/strict";
import { OrchApiServer } from "./orch_api_server.ts";

const LEASES = "/apis/coordination.k8s.io/v1/namespaces/mesh-system/leases";

function lease(holder: string, resourceVersion?: string, renewTime = new Date().toISOString()) {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: "mesh-leader",
      namespace: "mesh-system",
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    spec: { holderIdentity: holder, leaseDurationSeconds: 30, renewTime, acquireTime: renewTime },
  };
}

async function send(server: OrchApiServer, method: string, path: string, body: unknown, token: string) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

Deno.test("The test API server refuses a Lease replace naming a stale resourceVersion with 409, as a real one", async () => {
  const server = OrchApiServer.start();
  try {
    const created = await send(server, "POST", LEASES, lease("a"), "a");
    assert.equal(created.status, 201);
    const again = await send(server, "POST", LEASES, lease("b"), "b");
    assert.equal(again.status, 409);
    const version = created.body.metadata.resourceVersion;
    const renewed = await send(server, "PUT", `${LEASES}/mesh-leader`, lease("a", version), "a");
    assert.equal(renewed.status, 200);
    const stale = await send(server, "PUT", `${LEASES}/mesh-leader`, lease("b", version), "b");
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, "Conflict");
    assert.deepEqual([server.ledger.writesBy("a"), server.ledger.writesBy("b")], [2, 0]);
  } finally {
    await server.close();
  }
});

Deno.test("The ledger records who held each Lease at every write, and a takeover before the term ended", async () => {
  const server = OrchApiServer.start();
  try {
    const created = await send(server, "POST", LEASES, lease("a"), "a");
    await send(server, "POST", "/apis/networking.mesh.io/v1alpha3/namespaces/vm/workloadentries", {
      apiVersion: "networking.mesh.io/v1alpha3",
      kind: "WorkloadEntry",
      metadata: { name: "vm-1", namespace: "vm" },
      spec: { address: "10.0.0.1" },
    }, "a");
    assert.deepEqual(server.ledger.writes[1].leaseHolders, { "mesh-leader": "a" });
    const taken = lease("b", created.body.metadata.resourceVersion);
    await send(server, "PUT", `${LEASES}/mesh-leader`, taken, "b");
    assert.equal(server.ledger.overlaps.length, 1);
    assert.match(server.ledger.overlaps[0], /"b" took it from "a"/);
  } finally {
    await server.close();
  }
});
