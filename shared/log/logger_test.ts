import assert from "node:assert/strict";
import { RecordingLogger } from "../testing/recording_logger.ts";
import { withFields } from "./logger.ts";

Deno.test("withFields adds its fields to every line of the logger it wraps; a line's own fields win", () => {
  const log = new RecordingLogger();
  const scoped = withFields(log, { cluster: "c2", secret: "s" });
  scoped.info("added");
  scoped.error("refused", { secret: "other", reason: "kubeconfig" });
  assert.deepEqual(log.lines, [
    { level: "info", msg: "added", fields: { cluster: "c2", secret: "s" } },
    { level: "error", msg: "refused", fields: { cluster: "c2", secret: "other", reason: "kubeconfig" } },
  ]);
  assert.equal(scoped.scope, log.scope);
  assert.equal(scoped.debugEnabled, true);
});
