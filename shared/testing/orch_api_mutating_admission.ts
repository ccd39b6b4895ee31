/**
 * Test support: the test API server's mutating admission, as a real API server does it on a write made through
 * the API, before validation (`orch_api_validating_admission.ts`). The webhooks of every stored
 * MutatingWebhookConfiguration are taken in order; each one the write wants (`orch_api_webhook_call.ts`: rules,
 * `namespaceSelector`, `objectSelector`, judged on the object as the webhooks before it left it) is called with
 * the object so far, and the JSON patch it answers with is applied. A denial refuses the write with the API
 * server's message; a failed call (a wrong `caBundle`, no answer) refuses it under `failurePolicy: Fail` (the
 * default) and is skipped under `Ignore`; a patch that cannot be applied refuses it. Only tests import this
 * file.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { applyJsonPatch, type JsonPatchOp } from "./json_patch.ts";
import {
  type AdmissionWrite,
  callFailure,
  denial,
  refusal,
  type StoredObject,
  type Webhook,
  type WebhookCaller,
} from "./orch_api_webhook_call.ts";

/** Calls the mutating webhooks a write matches and applies their patches. */
export class MutatingAdmission {
  /** Every webhook call made, as `<webhook name> <outcome>` (`patched`, `allowed`, `denied`, `failed`). */
  readonly calls: string[] = [];

  /** `caller` reaches the webhooks' services (shared with the validating stage). */
  constructor(readonly caller: WebhookCaller) {}

  /**
   * The object of a write made at `url` as the mutating webhooks leave it, or the API server's refusal.
   * Webhook configurations themselves are not admitted, as on a real server.
   */
  async admit(
    configurations: readonly StoredObject[],
    write: AdmissionWrite,
    url: URL,
  ): Promise<StoredObject | Response> {
    if (write.type.group === "admissionregistration.k8s.io") return write.object;
    const dryRun = url.searchParams.get("dryRun") === "All";
    let object = write.object;
    for (const webhook of configurations.flatMap((c) => (c.webhooks ?? []) as Webhook[])) {
      const current = { ...write, object };
      if (!this.caller.wants(webhook, current)) continue;
      let answer;
      try {
        answer = await this.caller.call(webhook, current, dryRun);
      } catch (error) {
        this.calls.push(`${webhook.name} failed`);
        if (webhook.failurePolicy === "Ignore") continue;
        return callFailure(webhook, error);
      }
      if (!answer.allowed) {
        this.calls.push(`${webhook.name} denied`);
        return denial(webhook, answer);
      }
      if (answer.patch === undefined) {
        this.calls.push(`${webhook.name} allowed`);
        continue;
      }
      try {
        if (answer.patchType !== "JSONPatch") {
          throw new TypeError(`patchType "${answer.patchType}" is not JSONPatch`);
        }
        const ops = JSON.parse(Buffer.from(answer.patch, "base64").toString("utf8")) as JsonPatchOp[];
        object = applyJsonPatch(object, ops) as StoredObject;
      } catch (error) {
        this.calls.push(`${webhook.name} failed`);
        return refusal(
          500,
          "InternalError",
          `Internal error occurred: the patch of webhook "${webhook.name}" failed: ${
            (error as Error).message
          }`,
        );
      }
      this.calls.push(`${webhook.name} patched`);
    }
    return object;
  }
}
