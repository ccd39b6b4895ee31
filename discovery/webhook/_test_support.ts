// Test support for the webhook tests: admission reviews and metric readers.
import { Metrics } from "@mesh/shared/metrics/metrics";
import type { Router } from "@mesh/shared/http/router";

/** Fresh metrics of the discovery program. */
export function testMetrics(): Metrics {
  return new Metrics("discovery", { version: "0.0.0-test", tag: "test" });
}

/** The value of one counter series (0 when the series does not exist yet). */
export async function counterValue(
  metrics: Metrics,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await metrics.counter(name).get();
  const series = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return series?.value ?? 0;
}

/** A VirtualService as a user writes it, with Istio's API group. */
export function virtualService(spec: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: "networking.istio.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: "reviews", namespace: "bookinfo" },
    spec,
    ...extra,
  };
}

/** A valid weighted VirtualService spec. */
export const VALID_SPEC = {
  hosts: ["reviews"],
  http: [{
    route: [
      { destination: { host: "reviews", subset: "v1" }, weight: 75 },
      { destination: { host: "reviews", subset: "v2" }, weight: 25 },
    ],
  }],
};

/** A spec with four errors in two routes. */
export const INVALID_SPEC = {
  hosts: ["reviews"],
  http: [
    {
      match: [{ uri: { prefix: "/v1" } }],
      route: [
        { destination: { host: "reviews", subset: "v1" }, weight: 75 },
        { destination: { host: "reviews", subset: "v2" }, weight: -5 },
      ],
    },
    { match: [{ uri: { regex: "(?=x)" } }], route: [{ destination: { host: "" } }] },
  ],
};

/** The error paths `INVALID_SPEC` must be denied for. */
export const INVALID_SPEC_ERROR_PATHS = [
  "spec.http[0].route[1].weight",
  "spec.http[0].route",
  "spec.http[1].match[0].uri.regex",
  "spec.http[1].route[0].destination.host",
];

/** An AdmissionReview request in `apiVersion` around `object`. */
export function admissionReview(
  object: unknown,
  options: { apiVersion?: string; operation?: string; uid?: string; namespace?: string } = {},
): Record<string, unknown> {
  return {
    apiVersion: options.apiVersion ?? "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: options.uid ?? "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: { group: "networking.istio.io", version: "v1beta1", kind: "VirtualService" },
      resource: { group: "networking.istio.io", version: "v1beta1", resource: "virtualservices" },
      name: "reviews",
      namespace: options.namespace ?? "bookinfo",
      operation: options.operation ?? "CREATE",
      userInfo: { username: "admin" },
      object,
      oldObject: null,
      dryRun: false,
    },
  };
}

/** Posts a JSON body to `router` at `path` and answers with the status and the body's text, as `"200 {…}"`. */
export function jsonPoster(
  router: Router,
  defaultPath: string,
): (body: string, path?: string) => Promise<string> {
  return async (body, path = defaultPath) => {
    const response = await router.handle(
      new Request(`https://webhook.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    return `${response.status} ${await response.text()}`;
  };
}
