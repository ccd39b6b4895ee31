// Conformance of the sidecar-injection webhook with the reference's own test data (tests/fixtures/injection/,
// Istio 1.9.9's TestInjection cases, renamed): every case goes through the webhook's HTTP handler as an
// AdmissionReview, its JSON patch is applied, and the result is compared with the golden pod the way the
// reference's webhook test compares them; then the golden pod is sent again and must come back unchanged.
import assert from "node:assert/strict";
import { RecordingLogger } from "../shared/testing/recording_logger.ts";
import { testMetrics } from "../discovery/webhook/_test_support.ts";
import {
  casePods,
  caseState,
  comparable,
  type ConformanceCase,
  conformanceCases,
  podReview,
} from "../discovery/inject/_conformance_support.ts";
import { injectWebhookHandler } from "../discovery/inject/inject_webhook.ts";
import { applyJsonPatch } from "../shared/testing/json_patch.ts";

type Obj = Record<string, unknown>;

/**
 * Cases whose webhook result is expected to differ from the golden, why, and the part that must still match.
 * The reference runs neither through its webhook (`skipWebhook`).
 */
const EXPECTED_DIFFERENCES: Readonly<Record<string, { reason: string; same: "spec" }>> = {
  "cronjob.yaml": {
    reason: "its golden is kube-inject's output, which writes the injected labels and annotations on the " +
      "CronJob's jobTemplate metadata; the webhook writes them on the pod",
    same: "spec",
  },
};

async function inject(c: ConformanceCase, pod: Obj, namespace: string): Promise<Obj> {
  const state = caseState(c);
  const handler = injectWebhookHandler({
    metrics: testMetrics(),
    log: new RecordingLogger(),
    state: () => state,
    revision: "default",
  });
  const url = new URL("https://webhook.test/inject");
  const request = new Request(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(podReview(pod, namespace)),
  });
  const response = await handler(request, url);
  assert.equal(response.status, 200);
  const review = await response.json();
  return review.response;
}

async function injected(c: ConformanceCase, pod: Obj, namespace: string): Promise<Obj> {
  const response = await inject(c, pod, namespace);
  assert.equal(response.allowed, true, `refused: ${JSON.stringify(response.status)}`);
  if (response.patch === undefined) return pod;
  const patch = JSON.parse(
    new TextDecoder().decode(Uint8Array.from(atob(response.patch as string), (ch) => ch.charCodeAt(0))),
  );
  return applyJsonPatch(pod, patch) as Obj;
}

function checkMetaJson(pod: Obj): void {
  for (const c of ((pod.spec as Obj).containers as Obj[]) ?? []) {
    for (const e of (c.env as Obj[] | undefined) ?? []) {
      if (!String(e.name).startsWith("MESH_METAJSON_")) continue;
      const parsed = JSON.parse(String(e.value));
      assert.ok(
        Object.values(parsed).every((v) => typeof v === "string"),
        `${e.name} is not a JSON object of strings`,
      );
    }
  }
}

for (const c of conformanceCases()) {
  Deno.test(`Injection conformance: ${c.name}`, async () => {
    if (c.expectedError !== null) {
      const [{ pod, namespace }] = casePods(c.input);
      const response = await inject(c, pod, namespace);
      assert.equal(response.allowed, false);
      assert.ok(
        String((response.status as Obj)?.message).toLowerCase().includes(c.expectedError),
        `the refusal ${JSON.stringify(response.status)} does not name ${c.expectedError}`,
      );
      return;
    }
    const inputs = casePods(c.input);
    const goldens = casePods(c.expected!);
    assert.equal(inputs.length, goldens.length, "input and golden have as many workloads");
    for (const [i, { pod, namespace }] of inputs.entries()) {
      const golden = goldens[i].pod;
      const result = await injected(c, pod, namespace);
      checkMetaJson(result);
      const difference = EXPECTED_DIFFERENCES[c.name];
      if (difference !== undefined) {
        assert.notDeepStrictEqual(comparable(result), comparable(golden), `listed as differing but matches`);
        assert.deepStrictEqual(comparable(result)[difference.same], comparable(golden)[difference.same]);
        continue;
      }
      assert.deepStrictEqual(comparable(result), comparable(golden));
      const again = await injected(c, golden, namespace);
      assert.deepStrictEqual(
        comparable(again, true),
        comparable(golden, true),
        "re-injection changed the pod",
      );
    }
  });
}
