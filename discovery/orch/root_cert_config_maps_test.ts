import assert from "node:assert/strict";
import { DUTIES, soleLeader } from "@mesh/shared/lifecycle/duty_gate";
import { OrchApiServer } from "@mesh/shared/testing/orch_api_server";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { clientOf, stored, SwitchableGate } from "./_test_writers.ts";
import { ROOT_CERT_CONFIG_MAP, ROOT_CERT_KEY, RootCertConfigMaps } from "./root_cert_config_maps.ts";

const ROOT_A = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const ROOT_B = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n";

function namespace(name: string, phase = "Active") {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name }, status: { phase } };
}

type ConfigMap = { metadata: { labels?: Record<string, string> }; data?: Record<string, string> };

async function rootCertIn(api: OrchApiServer, ns: string): Promise<ConfigMap | undefined> {
  return await stored(api, `/api/v1/namespaces/${ns}/configmaps/${ROOT_CERT_CONFIG_MAP}`) as
    | ConfigMap
    | undefined;
}

Deno.test("Every namespace gets the root certificate ConfigMap; deleted or edited, it comes back; rotation rewrites it", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_root_cert_" });
  let roots = ROOT_A;
  const controller = new RootCertConfigMaps({
    ...await clientOf(api, dir),
    gate: soleLeader(DUTIES.namespaceController),
    rootsPem: () => roots,
  });
  const holds = (ns: string, pem: string) => async () =>
    (await rootCertIn(api, ns))?.data?.[ROOT_CERT_KEY] === pem;
  try {
    api.apply(namespace("default"));
    api.apply(namespace("leaving", "Terminating"));
    controller.start();
    await waitFor(holds("default", ROOT_A), "the ConfigMap in an existing namespace");
    assert.deepEqual((await rootCertIn(api, "default"))!.metadata.labels, { "mesh.io/config": "true" });

    api.apply(namespace("shop"));
    await waitFor(holds("shop", ROOT_A), "the ConfigMap in a new namespace");

    api.delete("v1", "ConfigMap", "shop", ROOT_CERT_CONFIG_MAP);
    await waitFor(holds("shop", ROOT_A), "the deleted ConfigMap restored");

    api.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: ROOT_CERT_CONFIG_MAP, namespace: "shop" },
      data: { [ROOT_CERT_KEY]: "tampered", "extra.txt": "kept" },
    });
    await waitFor(holds("shop", ROOT_A), "the edited key restored");
    assert.equal((await rootCertIn(api, "shop"))!.data!["extra.txt"], "kept", "other keys are left alone");

    roots = ROOT_B + ROOT_A;
    controller.rootsChanged();
    await waitFor(holds("default", ROOT_B + ROOT_A), "the rotated roots in default");
    await waitFor(holds("shop", ROOT_B + ROOT_A), "the rotated roots in shop");
    await controller.idle();
    assert.equal(await rootCertIn(api, "leaving"), undefined, "a terminating namespace gets none");
  } finally {
    await controller.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("A replica that does not lead the namespace controller duty writes no ConfigMap", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_root_cert_" });
  const controller = new RootCertConfigMaps({
    ...await clientOf(api, dir),
    gate: new SwitchableGate(DUTIES.namespaceController),
    rootsPem: () => ROOT_A,
  });
  try {
    api.apply(namespace("default"));
    controller.start();
    controller.rootsChanged();
    await controller.idle();
    assert.equal(await rootCertIn(api, "default"), undefined);
    assert.equal(api.watchCount, 0, "not even watching");
  } finally {
    await controller.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("The ConfigMaps are kept only while the duty is led, and a replica that wins it back catches up", async () => {
  const api = OrchApiServer.start();
  const dir = await Deno.makeTempDir({ prefix: "mesh_root_cert_" });
  const gate = new SwitchableGate(DUTIES.namespaceController);
  const controller = new RootCertConfigMaps({
    ...await clientOf(api, dir),
    gate,
    rootsPem: () => ROOT_A,
  });
  const holds = async () => (await rootCertIn(api, "default"))?.data?.[ROOT_CERT_KEY] === ROOT_A;
  try {
    api.apply(namespace("default"));
    controller.start();
    assert.equal(api.watchCount, 0, "a follower does not even watch");
    gate.win();
    await waitFor(holds, "the ConfigMap once the duty is won");
    gate.lose();
    await waitFor(() => api.watchCount === 0, "the watches ended with the duty");
    api.delete("v1", "ConfigMap", "default", ROOT_CERT_CONFIG_MAP);
    gate.win();
    await waitFor(holds, "the ConfigMap deleted meanwhile, restored once the duty is won back");
  } finally {
    await controller.stop();
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
});
