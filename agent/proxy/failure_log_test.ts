import assert from "node:assert/strict";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { FailureLog } from "./failure_log.ts";

Deno.test("FailureLog logs each outage once: its first failure and its recovery", () => {
  const log = new RecordingLogger();
  const failures = new FailureLog(log, "metrics source");
  failures.succeeded("application");
  failures.failed("application", "connection refused");
  failures.failed("application", "connection refused");
  failures.failed("envoy", "timed out");
  failures.succeeded("application");
  failures.failed("application", "HTTP 500");
  assert.deepEqual(log.lines.map((l) => [l.level, l.msg, l.fields?.reason]), [
    [
      "warn",
      "metrics source application is failing; logged again only once it recovers",
      "connection refused",
    ],
    ["warn", "metrics source envoy is failing; logged again only once it recovers", "timed out"],
    ["info", "metrics source application recovered", undefined],
    ["warn", "metrics source application is failing; logged again only once it recovers", "HTTP 500"],
  ]);
});
