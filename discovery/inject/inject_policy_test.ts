import assert from "node:assert/strict";
import { skipReason } from "./inject_policy.ts";

const enabled = { policy: "enabled", neverInjectSelector: [], alwaysInjectSelector: [] };
const pod = (
  labels: Record<string, string>,
  annotations: Record<string, string> = {},
  hostNetwork = false,
) => ({
  namespace: "shop",
  hostNetwork,
  labels,
  annotations,
});

Deno.test("The sidecar.mesh.io/inject label decides like the annotation, and wins over it", () => {
  assert.equal(skipReason(enabled, pod({})), undefined);
  assert.match(skipReason(enabled, pod({ "sidecar.mesh.io/inject": "false" })) ?? "", /says no/);
  assert.match(
    skipReason(enabled, pod({ "sidecar.mesh.io/inject": "false" }, { "sidecar.mesh.io/inject": "true" })) ??
      "",
    /says no/,
  );
  const disabled = { ...enabled, policy: "disabled" };
  assert.equal(skipReason(disabled, pod({ "sidecar.mesh.io/inject": "true" })), undefined);
  assert.equal(skipReason(disabled, pod({})), "policy disabled");
});

Deno.test("Host-network pods and the system namespaces are never injected", () => {
  assert.equal(skipReason(enabled, pod({ "sidecar.mesh.io/inject": "true" }, {}, true)), "host network pod");
  assert.match(skipReason(enabled, { ...pod({}), namespace: "kube-system" }) ?? "", /never injected/);
  assert.match(
    skipReason({ ...enabled, policy: "sometimes" }, pod({})) ?? "",
    /policy "sometimes" injects no pod/,
  );
});
