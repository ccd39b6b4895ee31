/**
 * Test support: how the test API server (`orch_api_server.ts`) picks and calls an admission webhook, as a real
 * API server does for both the mutating and the validating stage. A webhook is wanted by a write when one of its
 * rules matches the operation and resource and its `namespaceSelector` and `objectSelector` select the write's
 * namespace and object labels. It is called with an AdmissionReview v1 over TLS, the server verified with the
 * webhook's `caBundle` (a wrong bundle is a failed call); a webhook's `service` is reached at the address the
 * test gives for it (`serve`). Only tests import this file.
 *
 * Not modelled: match policy (equivalent resources), side effects, reinvocation.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { type LabelSelector, labelSelectorMatches } from "../config/label_selector.ts";
import type { ResourceType } from "./orch_api_admission.ts";

/** A stored object, as the server keeps it. */
export type StoredObject = Record<string, unknown> & {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

type Rule = { operations?: string[]; apiGroups?: string[]; apiVersions?: string[]; resources?: string[] };

/** One webhook of a webhook configuration. */
export type Webhook = {
  name: string;
  clientConfig?: {
    url?: string;
    service?: { name: string; namespace: string; path?: string; port?: number };
    caBundle?: string;
  };
  rules?: Rule[];
  failurePolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  timeoutSeconds?: number;
};

/** The write being admitted. */
export interface AdmissionWrite {
  readonly type: ResourceType;
  readonly operation: "CREATE" | "UPDATE";
  readonly object: StoredObject;
  /** The stored version an update replaces. */
  readonly old?: StoredObject;
  /** The labels of the write's namespace (of the object itself when it is a Namespace). */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
}

/** A webhook's answer, as the AdmissionReview response carries it. */
export interface AdmissionAnswer {
  readonly allowed?: boolean;
  readonly status?: { message?: string; code?: number };
  readonly patchType?: string;
  /** Base64 of a JSON patch. */
  readonly patch?: string;
}

const matches = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).includes("*") || (list ?? []).includes(value);

/** The API server's `Status` answer refusing a write. */
export function refusal(code: number, reason: string, message: string): Response {
  return Response.json(
    { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code },
    { status: code },
  );
}

/** The refusal of a write whose webhook could not be called (failurePolicy Fail). */
export function callFailure(webhook: Webhook, error: unknown): Response {
  return refusal(
    500,
    "InternalError",
    `Internal error occurred: failed calling webhook "${webhook.name}": ${(error as Error).message}`,
  );
}

/** The refusal of a write a webhook denied. */
export function denial(webhook: Webhook, answer: AdmissionAnswer): Response {
  return refusal(
    answer.status?.code ?? 400,
    "BadRequest",
    `admission webhook "${webhook.name}" denied the request: ${answer.status?.message ?? ""}`,
  );
}

/** Picks the webhooks a write wants and calls them. */
export class WebhookCaller {
  /** `namespace/name` of a webhook's service → the base URL it is reached at (`https://localhost:<port>`). */
  readonly #services = new Map<string, string>();

  /** The service `namespace/name` is served at `baseUrl`. */
  serve(service: string, baseUrl: string): void {
    this.#services.set(service, baseUrl);
  }

  /** The webhooks of `configurations` that `write` calls, in order. */
  wanted(configurations: readonly StoredObject[], write: AdmissionWrite): Webhook[] {
    return configurations.flatMap((c) => (c.webhooks ?? []) as Webhook[]).filter((w) => this.wants(w, write));
  }

  /** Whether `webhook` is called for `write`: a rule matches and both selectors select. */
  wants(webhook: Webhook, write: AdmissionWrite): boolean {
    const { type } = write;
    return (webhook.rules ?? []).some((rule) =>
      matches(rule.operations, write.operation) && matches(rule.apiGroups, type.group) &&
      matches(rule.apiVersions, type.version) && matches(rule.resources, type.plural)
    ) &&
      // A cluster-scoped object other than a Namespace is never excluded by a namespace selector.
      (!type.namespaced && type.kind !== "Namespace" ||
        labelSelectorMatches(webhook.namespaceSelector ?? {}, write.namespaceLabels ?? {})) &&
      labelSelectorMatches(webhook.objectSelector ?? {}, write.object.metadata.labels ?? {});
  }

  /** Calls `webhook` with an AdmissionReview of `write`; throws when the call fails. */
  async call(webhook: Webhook, write: AdmissionWrite, dryRun: boolean): Promise<AdmissionAnswer> {
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
      const review = await response.json() as { response?: AdmissionAnswer };
      if (review.response === undefined) throw new Error("the webhook's answer holds no response");
      return review.response;
    } finally {
      client.close();
    }
  }
}
