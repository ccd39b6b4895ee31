/**
 * Properties checked by fuzzing the inputs a peer or an operator controls: config files, the mesh config,
 * environment variables, AdmissionReview requests and xDS requests. Each says: every input gets an answer or
 * a clear rejection (the documented error type), never another exception. The test runs them briefly; the
 * benchmark runs each on at least 100 000 inputs.
 *
 * @module
 */
import fc from "fast-check";
import YAML from "yaml";
import type protobuf from "protobufjs";
import { decodeDeltaDiscoveryRequest, decodeDiscoveryRequest } from "../../proto/discovery_request.ts";
import { EnvSettings, InvalidEnvError } from "../../shared/env/env_settings.ts";
import { ENV_VARS } from "../../shared/env/env_vars.ts";
import { MeshConfigError } from "../../shared/config/mesh/mesh_config_error.ts";
import { parseMeshConfig } from "../../shared/config/mesh/parse_mesh_config.ts";
import { silentLogger } from "../../shared/log/logger.ts";
import { Metrics } from "../../shared/metrics/metrics.ts";
import { loadConfigText } from "../../discovery/config/config_file_load.ts";
import { validationWebhookHandler } from "../../discovery/webhook/validation_webhook.ts";

/** A valid resource to mutate, so that inputs reach the validators and not only the YAML parser. */
const VIRTUAL_SERVICE = {
  apiVersion: "networking.istio.io/v1beta1",
  kind: "VirtualService",
  metadata: { name: "reviews", namespace: "shop" },
  spec: {
    hosts: ["reviews"],
    http: [{ route: [{ destination: { host: "reviews", subset: "v1" }, weight: 100 }] }],
  },
};

/** Any JSON value, with keys drawn partly from the resource's own so that mutations stay near valid. */
const nearResource: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(VIRTUAL_SERVICE),
    fc.jsonValue(),
    fc.dictionary(
      fc.constantFrom(
        "apiVersion",
        "kind",
        "metadata",
        "spec",
        "name",
        "namespace",
        "hosts",
        "http",
        "route",
        "x",
      ),
      tie("value"),
      { maxKeys: 5 },
    ),
    fc.record({
      apiVersion: fc.constantFrom(
        VIRTUAL_SERVICE.apiVersion,
        "networking.mesh.io/v1beta1",
        "v1",
        "evil.io/v1",
      ),
      kind: fc.constantFrom("VirtualService", "DestinationRule", "ServiceEntry", "Gateway", "List", "Gizmo"),
      metadata: fc.oneof(fc.constant(VIRTUAL_SERVICE.metadata), tie("value")),
      spec: tie("value"),
    }),
  ),
})).value;

/** Text a config file might hold: random text, YAML and JSON of near-resources, truncated valid files. */
export const configText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.array(nearResource, { maxLength: 3 }).map((docs) => docs.map((d) => YAML.stringify(d)).join("---\n")),
  nearResource.map((d) => JSON.stringify(d) ?? ""),
  fc.nat({ max: 400 }).map((cut) => YAML.stringify(VIRTUAL_SERVICE).slice(0, cut)),
);

/** Config files: every text loads into documents and rejections; nothing throws. */
export function configFileProperty(): fc.IPropertyWithHooks<[string]> {
  return fc.property(configText, (text) => {
    const load = loadConfigText("/fuzz/config.yaml", text, "default");
    for (const rejection of load.rejections) {
      if (rejection.errors.length === 0) throw new Error("a rejection without a reason");
    }
  });
}

/** The mesh config: every text is a config or a {@link MeshConfigError}. */
export function meshConfigProperty(): fc.IPropertyWithHooks<[string]> {
  const meshText = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.dictionary(
      fc.constantFrom(
        "connectTimeout",
        "defaultConfig",
        "trustDomain",
        "outboundTrafficPolicy",
        "enableTracing",
        "x",
      ),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 4 },
    ).map((d) => YAML.stringify(d)),
  );
  return fc.property(meshText, (text) => {
    try {
      parseMeshConfig(text, "/fuzz/mesh.yaml");
    } catch (error) {
      if (!(error instanceof MeshConfigError)) throw error;
    }
  });
}

/** Environment variables: any value of any declared variable is accepted or an {@link InvalidEnvError}. */
export function envSettingsProperty(): fc.IPropertyWithHooks<[string, string]> {
  const names = ENV_VARS.filter((v) => v.programs.includes("discovery")).map((v) => v.name);
  const value = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.double().map(String),
    fc.integer().map(String),
    fc.constantFrom("NaN", "Inf", "-1", "0", "1e400", "-10s", "1h", "true", "t", ""),
  );
  return fc.property(fc.constantFrom(...names), value, (name, text) => {
    try {
      new EnvSettings("discovery", { [name]: text });
    } catch (error) {
      if (!(error instanceof InvalidEnvError)) throw error;
    }
  });
}

/** The validation webhook: every request is answered 200 (with the request's uid) or refused 4xx. */
export function admissionReviewProperty(): fc.IAsyncPropertyWithHooks<[unknown, string, string]> {
  const handler = validationWebhookHandler({
    metrics: new Metrics("discovery", { version: "fuzz", tag: "fuzz" }),
    log: silentLogger,
  });
  const review = fc.record({
    apiVersion: fc.constantFrom("admission.k8s.io/v1", "admission.k8s.io/v1beta1", "x"),
    kind: fc.constantFrom("AdmissionReview", "Other"),
    request: fc.oneof(
      fc.record({
        uid: fc.string({ minLength: 1, maxLength: 10 }),
        operation: fc.constantFrom("CREATE", "UPDATE", "DELETE", "CONNECT", "X"),
        object: nearResource,
        kind: fc.option(fc.record({ group: fc.string(), version: fc.string(), kind: fc.string() })),
        namespace: fc.option(fc.string({ maxLength: 10 })),
      }),
      fc.jsonValue(),
    ),
  });
  const body = fc.oneof(review.map((r) => JSON.stringify(r)), fc.string({ maxLength: 100 }));
  const contentType = fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "",
  );
  return fc.asyncProperty(fc.constant(undefined), body, contentType, async (_, text, type) => {
    const response = await handler(
      new Request("https://webhook/validate", {
        method: "POST",
        body: text,
        headers: type === "" ? {} : { "content-type": type },
      }),
    );
    const answer = await response.json();
    if (response.status === 200) {
      const sent = JSON.parse(text);
      if (answer.response?.uid !== sent.request.uid) throw new Error("the answer does not carry the uid");
      if (typeof answer.response.allowed !== "boolean") throw new Error("the answer has no decision");
    } else if (![400, 413, 415].includes(response.status) || typeof answer.error !== "string") {
      throw new Error(`unexpected reply ${response.status}`);
    }
  });
}

/**
 * The xDS request decoder: any bytes (random, or a valid request with bytes flipped, cut or appended) decode
 * to a request or throw {@link TypeError}; both SotW and delta.
 */
export function xdsRequestProperty(root: protobuf.Root): fc.IPropertyWithHooks<[Uint8Array, boolean]> {
  const type = root.lookupType("envoy.service.discovery.v3.DiscoveryRequest");
  const valid = type.encode(type.fromObject({
    version_info: "1",
    node: {
      id: "sidecar~10.0.0.1~app.shop~shop.svc.cluster.local",
      metadata: { fields: { NAMESPACE: { string_value: "shop" }, LIST: { list_value: { values: [{}] } } } },
    },
    resource_names: ["a", "b"],
    type_url: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
    response_nonce: "n",
  })).finish();
  const mutated = fc.tuple(
    fc.array(fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
    fc.nat({ max: valid.length }),
    fc.uint8Array({ maxLength: 8 }),
  ).map(([flips, cut, tail]) => {
    const bytes = valid.slice(0, Math.max(cut, 1));
    for (const [at, value] of flips) if (at < bytes.length) bytes[at] = value;
    const out = new Uint8Array(bytes.length + tail.length);
    out.set(bytes);
    out.set(tail, bytes.length);
    return out;
  });
  const bytes = fc.oneof(fc.uint8Array({ maxLength: 200 }), mutated);
  return fc.property(bytes, fc.boolean(), (input, delta) => {
    try {
      if (delta) decodeDeltaDiscoveryRequest(input, root);
      else decodeDiscoveryRequest(input, root);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
  });
}
