import assert from "node:assert/strict";
import { loadEnvoySchema } from "../proto/envoy_schema.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { deltaAnswerer, sotwAnswerer } from "./replay_answers.ts";

const schema = loadEnvoySchema();
const encode = (name: string, request: Record<string, unknown>) => {
  const type = schema.lookupType(`envoy.service.discovery.v3.${name}`);
  return type.encode(type.fromObject(request)).finish();
};

Deno.test("a state-of-the-world stream is answered when a type's names change, not on an ACK of the same names", () => {
  const answers = sotwAnswerer();
  const eds = (names: string[], nonce = "") =>
    encode("DiscoveryRequest", { type_url: TYPE_URL.endpoint, resource_names: names, response_nonce: nonce });
  assert.equal(answers(eds(["b", "a"])), TYPE_URL.endpoint);
  assert.equal(answers(eds(["a", "b"], "n1")), undefined);
  assert.equal(answers(eds(["a", "b", "c"], "n1")), TYPE_URL.endpoint);
  assert.equal(answers(encode("DiscoveryRequest", { type_url: TYPE_URL.cluster })), TYPE_URL.cluster);
});

Deno.test("an incremental stream is answered when it subscribes, not on a plain ACK", () => {
  const answers = deltaAnswerer();
  const request = (subscribe: string[], nonce = "") =>
    encode("DeltaDiscoveryRequest", {
      type_url: TYPE_URL.cluster,
      resource_names_subscribe: subscribe,
      response_nonce: nonce,
    });
  assert.equal(answers(request([])), TYPE_URL.cluster);
  assert.equal(answers(request([], "n1")), undefined);
  assert.equal(answers(request(["x"], "n1")), TYPE_URL.cluster);
});
