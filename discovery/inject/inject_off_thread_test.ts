import assert from "node:assert/strict";
import { Router } from "@mesh/shared/http/router";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { OffThreadJobs } from "@mesh/shared/process/off_thread_jobs";
import { jsonPoster, testMetrics } from "../webhook/_test_support.ts";
import { casePods, caseState, conformanceCases, podReview } from "./_conformance_support.ts";
import { type InjectionJob, injectWebhookRoutes } from "./inject_webhook.ts";
import type { InjectionVerdict, InjectorState } from "./inject_review.ts";

function webhook(state: () => InjectorState, jobs?: OffThreadJobs<InjectionJob, InjectionVerdict>) {
  const metrics = testMetrics();
  const router = injectWebhookRoutes(new Router(), {
    metrics,
    log: new RecordingLogger(),
    state,
    revision: "default",
    ...(jobs && { offThread: { jobs, fromChars: 0 } }),
  });
  const post = jsonPoster(router, "/inject");
  return { post, metrics };
}

Deno.test("Injection reviews judged in the worker are answered and counted as in line", async () => {
  const jobs = new OffThreadJobs<InjectionJob, InjectionVerdict>({
    worker: new URL("./injection_worker.ts", import.meta.url),
  });
  try {
    let state: InjectorState | undefined;
    const inline = webhook(() => state!);
    const worker = webhook(() => state!, jobs);
    let compared = 0;
    // Every case has its own config, values and mesh: the worker parses them again whenever they change.
    for (const c of conformanceCases()) {
      state = caseState(c);
      for (const { pod, namespace } of casePods(c.input).slice(0, 1)) {
        const bodies = [
          JSON.stringify(podReview(pod, namespace)),
          JSON.stringify({ ...podReview(pod, namespace), apiVersion: "admission.k8s.io/v1beta1" }),
        ];
        for (const body of bodies) {
          for (const path of ["/inject", "/inject/cluster/east/net/n1"]) {
            assert.equal(
              await worker.post(body, path),
              await inline.post(body, path),
              `${c.name} on ${path}`,
            );
            compared++;
          }
        }
      }
    }
    for (const body of ["", "{", '{"kind":"AdmissionReview","apiVersion":"v9"}', '{"kind":"Pod"}']) {
      assert.equal(await worker.post(body), await inline.post(body), `body ${JSON.stringify(body)}`);
    }
    assert.ok(compared > 100, `only ${compared} reviews compared`);
    assert.equal(jobs.started, true, "the reviews went to the worker");
    assert.equal(await worker.metrics.render(), await inline.metrics.render());
  } finally {
    jobs.close();
  }
});
