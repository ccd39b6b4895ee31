/**
 * Test support: the test API server's validating admission, as a real API server does it on a write, after
 * the mutating stage (`orch_api_mutating_admission.ts`). Every webhook of every stored
 * ValidatingWebhookConfiguration the write wants (`orch_api_webhook_call.ts`: rules and selectors) is called;
 * a denial refuses the write with the API server's message (`admission webhook "<name>" denied the request:
 * <reason>`), a failed call refuses it under `failurePolicy: Fail` and is skipped under `Ignore`. Only tests
 * import this file.
 *
 * @module
 */
import {
  type AdmissionWrite,
  callFailure,
  denial,
  type StoredObject,
  WebhookCaller,
} from "./orch_api_webhook_call.ts";

/** Calls the validating webhooks a write matches. */
export class ValidatingAdmission {
  /** Every webhook call made, as `<webhook name> <outcome>` (`allowed`, `denied`, `failed`). */
  readonly calls: string[] = [];

  /** `caller` reaches the webhooks' services (shared with the mutating stage). */
  constructor(readonly caller: WebhookCaller = new WebhookCaller()) {}

  /** The service `namespace/name` is served at `baseUrl`. */
  serve(service: string, baseUrl: string): void {
    this.caller.serve(service, baseUrl);
  }

  /**
   * The API server's refusal of a write made at `url`, the unstored answer to a `dryRun=All` write that passed,
   * or undefined when the write is to be stored. Webhook configurations themselves are not admitted, as on a
   * real server.
   */
  async admit(
    configurations: readonly StoredObject[],
    write: AdmissionWrite,
    url: URL,
  ): Promise<Response | undefined> {
    const dryRun = url.searchParams.get("dryRun") === "All";
    const refused = write.type.group === "admissionregistration.k8s.io"
      ? undefined
      : await this.#review(configurations, write, dryRun);
    if (refused !== undefined || !dryRun) return refused;
    return Response.json(write.object, { status: write.operation === "CREATE" ? 201 : 200 });
  }

  /** Undefined when every matching webhook allows the write (or is skipped); else the API server's refusal. */
  async #review(
    configurations: readonly StoredObject[],
    write: AdmissionWrite,
    dryRun: boolean,
  ): Promise<Response | undefined> {
    for (const webhook of this.caller.wanted(configurations, write)) {
      let answer;
      try {
        answer = await this.caller.call(webhook, write, dryRun);
      } catch (error) {
        this.calls.push(`${webhook.name} failed`);
        if (webhook.failurePolicy === "Ignore") continue;
        return callFailure(webhook, error);
      }
      if (answer.allowed) {
        this.calls.push(`${webhook.name} allowed`);
        continue;
      }
      this.calls.push(`${webhook.name} denied`);
      return denial(webhook, answer);
    }
    return undefined;
  }
}
