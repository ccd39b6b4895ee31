/**
 * Resource lists framed once: proxies of one shape are handed the very same list for a push, so its
 * resources are framed as a response's `resources` field once for all of them, and each response then copies
 * one run of bytes instead of framing thousands of resources field by field.
 *
 * @module
 */
import { frameResourceRun } from "../../proto/discovery_frame.ts";
import type { VersionedResource } from "./versioned_resource.ts";

const anyRuns = new WeakMap<readonly VersionedResource[], Uint8Array>();
const deltaRuns = new WeakMap<readonly VersionedResource[], Uint8Array>();

function cachedRun(
  cache: WeakMap<readonly VersionedResource[], Uint8Array>,
  resources: readonly VersionedResource[],
  bytesOf: (resource: VersionedResource) => Uint8Array,
): Uint8Array {
  let run = cache.get(resources);
  if (run === undefined) {
    run = frameResourceRun(resources.map(bytesOf));
    cache.set(resources, run);
  }
  return run;
}

/** A list's `Any` messages framed as a state-of-the-world response's resources, once per list. */
export function anyRun(resources: readonly VersionedResource[]): Uint8Array {
  return cachedRun(anyRuns, resources, (r) => r.encoded);
}

/** A list's `Resource` messages framed as an incremental response's resources, once per list. */
export function deltaRun(resources: readonly VersionedResource[]): Uint8Array {
  return cachedRun(deltaRuns, resources, (r) => r.deltaResource);
}
