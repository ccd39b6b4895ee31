import assert from "node:assert/strict";
import { encodeAny } from "@mesh/proto/any_codec";
import { frameDeltaDiscoveryResponse, frameDiscoveryResponse } from "@mesh/proto/discovery_frame";
import { TYPE_URL } from "@mesh/proto/type_urls";
import {
  anyFraming,
  deltaFraming,
  type FramedResponse,
  type ResourceFraming,
  responseInputs,
} from "./resource_runs.ts";
import { ListMemos } from "./list_memos.ts";
import { VersionedResource } from "./versioned_resource.ts";

function list(...names: string[]): VersionedResource[] {
  return names.map((name) =>
    new VersionedResource(
      name,
      encodeAny(TYPE_URL.cluster, { name, type: "EDS", connect_timeout: { seconds: 1 } }),
    )
  );
}

function sotwBytes(framed: ResourceFraming): Uint8Array {
  return frameDiscoveryResponse({
    version_info: "v1",
    resources: framed.inline ?? [],
    ...(framed.run === undefined ? {} : { resource_run: framed.run }),
    type_url: TYPE_URL.cluster,
    nonce: "n1",
  });
}

Deno.test("anyFraming frames a list in place on its first use and as one shared run from its second on", () => {
  const resources = list("a", "b", "c");
  const first = anyFraming(resources);
  assert.equal(first.run, undefined, "a list used once is never framed twice");
  assert.equal(first.inline?.length, 3);
  const second = anyFraming(resources);
  assert.ok(second.run !== undefined);
  assert.equal(anyFraming(resources).run, second.run, "every later use shares the one run");
  assert.equal(
    anyFraming(resources),
    second,
    "and the one framing: a proxy's response makes none of its own",
  );
  assert.deepEqual(sotwBytes(first), sotwBytes(second), "both framings make the same response");
  assert.equal(
    anyFraming(list("a", "b", "c")).run,
    undefined,
    "an equal list that is another list starts over",
  );
});

Deno.test("deltaFraming does the same with Resource messages, kept apart from the SotW runs", () => {
  const resources = list("a", "b");
  assert.ok(anyFraming(resources).inline !== undefined);
  const first = deltaFraming(resources);
  const second = deltaFraming(resources);
  assert.deepEqual(first.inline, resources.map((r) => r.deltaResource), "the SotW use does not count");
  assert.ok(second.run !== undefined);
  const response = (framed: ResourceFraming) =>
    frameDeltaDiscoveryResponse({
      system_version_info: "v1",
      resources: [],
      ...(framed.run === undefined ? { encoded_resources: framed.inline } : { resource_run: framed.run }),
      type_url: TYPE_URL.cluster,
      nonce: "n1",
    });
  assert.deepEqual(response(first), response(second));
});

Deno.test("A server's shared response is framed once per list and inputs, and again when the inputs change", () => {
  const memos = new ListMemos();
  const resources = list("a", "b");
  let framed = 0;
  const frame = (): FramedResponse => ({ bytes: Uint8Array.of(++framed), nonce: `n${framed}` });
  const v1 = responseInputs("sotw", TYPE_URL.cluster, "v1", undefined, undefined);
  const shared = memos.sharedResponse(resources, v1, frame);
  assert.equal(
    memos.sharedResponse(resources, v1, frame),
    shared,
    "the same bytes and nonce for the same inputs",
  );
  assert.equal(framed, 1);
  const others = [
    responseInputs("delta", TYPE_URL.cluster, "v1", undefined, undefined),
    responseInputs("sotw", TYPE_URL.endpoint, "v1", undefined, undefined),
    responseInputs("sotw", TYPE_URL.cluster, "v2", undefined, undefined),
    responseInputs("sotw", TYPE_URL.cluster, "v1", "v1", undefined),
    responseInputs("sotw", TYPE_URL.cluster, "v1", undefined, { identifier: "meshd-1" }),
  ];
  assert.equal(new Set([v1, ...others]).size, others.length + 1, "every input tells responses apart");
  for (const inputs of others) assert.notEqual(memos.sharedResponse(resources, inputs, frame), shared);
  assert.notEqual(
    memos.sharedResponse(list("a", "b"), v1, frame).nonce,
    shared.nonce,
    "another list, another response",
  );
});

Deno.test("A server works out a response's inputs once for every proxy of a push, and anew when any changes", () => {
  const memos = new ListMemos();
  const plane = { identifier: "meshd-1" };
  const first = memos.inputsOf("sotw", TYPE_URL.endpoint, "v1", undefined, plane);
  assert.equal(first, responseInputs("sotw", TYPE_URL.endpoint, "v1", undefined, plane));
  // Identity, not only equality: the proxies of one push share the one string.
  assert.ok(Object.is(memos.inputsOf("sotw", TYPE_URL.endpoint, "v1", undefined, plane), first));
  const changed: [Parameters<ListMemos["inputsOf"]>, string][] = [
    [["delta", TYPE_URL.endpoint, "v1", undefined, plane], "protocol"],
    [["sotw", TYPE_URL.cluster, "v1", undefined, plane], "type"],
    [["sotw", TYPE_URL.endpoint, "v2", undefined, plane], "version"],
    [["sotw", TYPE_URL.endpoint, "v2", "v2", plane], "nonce version"],
    [["sotw", TYPE_URL.endpoint, "v2", "v2", { identifier: "meshd-2" }], "control plane"],
  ];
  for (const [args, what] of changed) {
    assert.equal(memos.inputsOf(...args), responseInputs(...args), `a new ${what}, its own inputs`);
  }
});
