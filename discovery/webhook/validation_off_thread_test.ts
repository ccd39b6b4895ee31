import assert from "node:assert/strict";
import { Router } from "@mesh/shared/http/router";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import FakeTimers from "@sinonjs/fake-timers";
import { type JobMessage, type JobWorker, OffThreadJobs } from "@mesh/shared/process/off_thread_jobs";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { waitFor } from "@mesh/shared/testing/wait_for";
import {
  ADMISSION_BODY_LIMITS,
  judgeValidationReview,
  type ValidationVerdict,
  validationWebhookRoutes,
} from "./validation_webhook.ts";
import { ADMISSION_BUSY_MESSAGE } from "./admission_off_thread.ts";
import {
  admissionReview,
  counterValue,
  INVALID_SPEC,
  jsonPoster,
  testMetrics,
  VALID_SPEC,
  virtualService,
} from "./_test_support.ts";

function webhookRouter(offThread?: { jobs: OffThreadJobs<string, ValidationVerdict>; fromChars: number }) {
  const metrics = testMetrics();
  const router = validationWebhookRoutes(new Router(), {
    metrics,
    log: new RecordingLogger(),
    ...(offThread && { offThread }),
  });
  return { metrics, router };
}

function webhook(offThread?: { jobs: OffThreadJobs<string, ValidationVerdict>; fromChars: number }) {
  const { metrics, router } = webhookRouter(offThread);
  const post = jsonPoster(router, "/validate");
  return { post, metrics };
}

Deno.test("Validation reviews from the worker's size on are judged there, answered and counted as in line", async () => {
  const jobs = new OffThreadJobs<string, ValidationVerdict>({
    worker: new URL("./validation_worker.ts", import.meta.url),
  });
  try {
    const inline = webhook();
    const worker = webhook({ jobs, fromChars: 1000 });
    const small = JSON.stringify(admissionReview(virtualService(VALID_SPEC)));
    assert.ok(small.length < 1000, `a ${small.length}-character review`);
    assert.equal(await worker.post(small), await inline.post(small));
    assert.equal(jobs.started, false, "a review under the size is judged in line");
    const regexRoutes = Array.from({ length: 50 }, (_, i) => ({
      match: [{ uri: { regex: i % 2 ? `^/a${i}/.*` : `(a${i}` } }],
      route: [{ destination: { host: `reviews-${i}` } }],
    }));
    const padded = {
      metadata: { name: "reviews", namespace: "bookinfo", annotations: { note: "x".repeat(1000) } },
    };
    const bodies = [
      JSON.stringify(
        admissionReview(virtualService({ ...VALID_SPEC, hosts: ["reviews", "x".repeat(1000)] })),
      ),
      JSON.stringify(admissionReview(virtualService({ hosts: ["reviews"], http: regexRoutes }))),
      JSON.stringify(admissionReview(virtualService(INVALID_SPEC, padded), { operation: "UPDATE" })),
      JSON.stringify(admissionReview(virtualService(VALID_SPEC, padded), { operation: "DELETE" })),
      JSON.stringify(
        admissionReview({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c".repeat(1000) } }),
      ),
      "{" + " ".repeat(1000),
      JSON.stringify({ kind: "AdmissionReview", apiVersion: "admission.k8s.io/v9", pad: "x".repeat(1000) }),
    ];
    for (const body of bodies) {
      assert.ok(body.length >= 1000);
      assert.equal(await worker.post(body), await inline.post(body), body.slice(0, 80));
    }
    assert.equal(jobs.started, true, "the larger reviews went to the worker");
    assert.equal(await worker.metrics.render(), await inline.metrics.render());
  } finally {
    jobs.close();
  }
});

Deno.test("A review still waiting for the worker when the API server has stopped waiting is answered 503 and counted", async () => {
  const clock = FakeTimers.createClock();
  const posted: JobMessage<string>[] = [];
  let worker: JobWorker | undefined;
  const jobs = new OffThreadJobs<string, ValidationVerdict>({
    worker: new URL("file:///unused.ts"),
    timers: timersOf(clock),
    spawn: () =>
      worker = {
        onmessage: null,
        onerror: null,
        postMessage: (message) => posted.push(message as JobMessage<string>),
        terminate: () => {},
      },
  });
  try {
    const { metrics, router } = webhookRouter({ jobs, fromChars: 0 });
    const review = JSON.stringify(admissionReview(virtualService(VALID_SPEC)));
    const request = () =>
      router.handle(
        new Request("https://webhook.test/validate", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: review,
        }),
      );
    const first = request();
    const second = request();
    await waitFor(() => posted.length === 1, "the first review to reach the worker");
    clock.tick(ADMISSION_BODY_LIMITS.timeoutMs + 1);
    const job = posted.shift()!;
    worker!.onmessage!(
      new MessageEvent("message", { data: { id: job.id, ok: true, result: judgeValidationReview(job.job) } }),
    );
    assert.equal((await (await first).json()).response.allowed, true);
    const late = await second;
    assert.equal(late.status, 503);
    assert.equal(
      (await late.json()).error,
      `${ADMISSION_BUSY_MESSAGE} (the job waited past its deadline by 1 ms)`,
    );
    assert.equal(posted.length, 0, "the late review was never sent to the worker");
    assert.equal(await counterValue(metrics, "config_validation_http_error", { status: "503" }), 1);
  } finally {
    jobs.close();
  }
});
