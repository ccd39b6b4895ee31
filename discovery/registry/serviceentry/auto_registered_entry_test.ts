import assert from "node:assert/strict";
import { AUTO_REGISTRATION_GROUP_ANNOTATION, workloadEntryFromGroup } from "./auto_registered_entry.ts";
import { group, vm } from "./_auto_registration_test_support.ts";

Deno.test("workloadEntryFromGroup fills the group's template from the proxy", () => {
  const entry = workloadEntryFromGroup(group, vm);
  assert.equal(entry.meta.name, "reviews-10.1.0.7-vpc-1");
  assert.equal(entry.meta.namespace, "vm");
  assert.deepEqual(entry.spec, {
    address: "10.1.0.7",
    labels: { app: "reviews", tier: "proxy", version: "v1" },
    ports: { http: 8080 },
    serviceAccount: "reviews",
    network: "vpc-1",
    locality: "r1/z2",
  });
  assert.deepEqual(entry.meta.annotations, {
    team: "books",
    [AUTO_REGISTRATION_GROUP_ANNOTATION]: "reviews",
  });
});
