/**
 * Test support: the test API server's validating admission, as a real API server does it on a write. Every
 * webhook of every stored ValidatingWebhookConfiguration whose rules match the write is called with an
 * AdmissionReview v1 over TLS, the server verified with the webhook's `caBundle` (a wrong bundle is a failed
 * call); a denial refuses the write with the API server's message (`admission webhook "<name>" denied the
 * request: <reason>`), a failed call refuses it under `failurePolicy: Fail` and is skipped under `Ignore`. A
 * webhook's `service` is reached at the address the test gives for it (`serve`). Only tests import this file.
 *
 * Not modelled: namespace and object selectors, match policy, side effects, mutating webhooks.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { ResourceType } from "./orch_api_admission.ts";

/** A stored object, as the server keeps it. */
type StoredObject = Record<string, unknown> & { metadata: { name: string; namespace?: string } };

type Rule = { operations?: string[]; apiGroups?: string[]; apiVersions?: string[]; resources?: string[] };
type Webhook = {
  name: string;
  clientConfig?: {
    url?: string;
    service?: { name: string; namespace: string; path?: string; port?: number };
    caBundle?: string;
  };
  rules?: Rule[];
  failurePolicy?: string;
  timeoutSeconds?: number;
};

/** The write being admitted. */
export interface AdmissionWrite {
  readonly type: ResourceType;
  readonly operation: "CREATE" | "UPDATE";
  readonly object: StoredObject;
  /** The stored version an update replaces. */
  readonly old?: StoredObject;
}

const matches = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).includes("*") || (list ?? []).includes(value);

function refusal(code: number, reason: string, message: string): Response {
  return Response.json(
    { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code },
    { status: code },
  );
}

/** Calls the validating webhooks a write matches. */
export class ValidatingAdmission {
  /** `namespace/name` of a webhook's service → the base URL it is reached at (`https://localhost:<port>`). */
  readonly #services = new Map<string, string>();
  /** Every webhook call made, as `<webhook name> <outcome>` (`allowed`, `denied`, `failed`). */
  readonly calls: string[] = [];

  /** The service `namespace/name` is served at `baseUrl`. */
  serve(service: string, baseUrl: string): void {
    this.#services.set(service, baseUrl);
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
    const { type } = write;
    for (const configuration of configurations) {
      for (const webhook of (configuration.webhooks ?? []) as Webhook[]) {
        const wanted = (webhook.rules ?? []).some((rule) =>
          matches(rule.operations, write.operation) && matches(rule.apiGroups, type.group) &&
          matches(rule.apiVersions, type.version) && matches(rule.resources, type.plural)
        );
        if (!wanted) continue;
        let answer: { allowed?: boolean; status?: { message?: string; code?: number } };
        try {
          answer = await this.#call(webhook, write, dryRun);
        } catch (error) {
          this.calls.push(`${webhook.name} failed`);
          if (webhook.failurePolicy === "Ignore") continue;
          return refusal(
            500,
            "InternalError",
            `Internal error occurred: failed calling webhook "${webhook.name}": ${(error as Error).message}`,
          );
        }
        if (answer.allowed) {
          this.calls.push(`${webhook.name} allowed`);
          continue;
        }
        this.calls.push(`${webhook.name} denied`);
        return refusal(
          answer.status?.code ?? 400,
          "BadRequest",
          `admission webhook "${webhook.name}" denied the request: ${answer.status?.message ?? ""}`,
        );
      }
    }
    return undefined;
  }

  async #call(webhook: Webhook, write: AdmissionWrite, dryRun: boolean) {
    const config = webhook.clientConfig ?? {};
    let url = config.url;
    if (url === undefined && config.service) {
      const base = this.#services.get(`${config.service.namespace}/${config.service.name}`);
      if (base === undefined) {
        throw new Error(`service "${config.service.namespace}/${config.service.name}" not found`);
      }
      url = `${base}${config.service.path ?? "/"}`;
    }
    if (url === undefined) throw new Error("the webhook names neither a url nor a service");
    const caBundle = Buffer.from(config.caBundle ?? "", "base64").toString("utf8");
    const client = Deno.createHttpClient(caBundle === "" ? {} : { caCerts: [caBundle] });
    try {
      const { type } = write;
      const response = await fetch(url, {
        client,
        method: "POST",
        headers: { "content-type": "application/json" },
        signal: AbortSignal.timeout((webhook.timeoutSeconds ?? 10) * 1000),
        body: JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          request: {
            uid: crypto.randomUUID(),
            kind: { group: type.group, version: type.version, kind: type.kind },
            resource: { group: type.group, version: type.version, resource: type.plural },
            name: write.object.metadata.name,
            ...(write.object.metadata.namespace ? { namespace: write.object.metadata.namespace } : {}),
            operation: write.operation,
            userInfo: { username: "test" },
            object: write.object,
            ...(write.old ? { oldObject: write.old } : {}),
            dryRun,
          },
        }),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`the webhook answered ${response.status}`);
      }
      const review = await response.json() as {
        response?: { allowed?: boolean; status?: { message?: string } };
      };
      if (review.response === undefined) throw new Error("the webhook's answer holds no response");
      return review.response;
    } finally {
      client.close();
    }
  }
}
