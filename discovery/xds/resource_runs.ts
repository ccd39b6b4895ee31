/**
 * How a response carries its resource list. Proxies of one shape are handed the very same list for a push, so
 * from a list's second use on its resources are framed as a response's `resources` field once, and each
 * response copies that one run of bytes instead of framing thousands of resources field by field. A list used
 * once — a proxy watching its own mix of names — is framed straight into its response: framing a run first
 * would copy every resource twice and leave a run nobody reuses.
 *
 * A list sent as a run is sent whole too: the response around it, nonce included, is framed once for every
 * proxy handed that list for the same version and type ({@link sharedResponse}). A nonce only has to tell
 * apart the responses of one type on one stream: proxies never see each other's, and a stream handed the
 * same shared response twice holds the same bytes whichever copy its ACK names.
 *
 * @module
 */
import { type ControlPlaneInfo, frameResourceRun } from "@mesh/proto/discovery_frame";
import type { VersionedResource } from "./versioned_resource.ts";

/** A response's resources: framed in place (`inline`), or a run framed once and shared (`run`). */
export type ResourceFraming =
  | { readonly inline: readonly Uint8Array[]; readonly run?: undefined }
  | { readonly inline?: undefined; readonly run: Uint8Array };

/** Per kind of message: the runs framed so far, and the lists used once (their next use frames a run). */
interface Runs {
  /** The framing of each list framed as a run: one object, handed to every response of the list. */
  readonly framed: WeakMap<readonly VersionedResource[], ResourceFraming>;
  readonly usedOnce: WeakSet<readonly VersionedResource[]>;
}

const anyRuns: Runs = { framed: new WeakMap(), usedOnce: new WeakSet() };
const deltaRuns: Runs = { framed: new WeakMap(), usedOnce: new WeakSet() };

function framing(
  runs: Runs,
  resources: readonly VersionedResource[],
  bytesOf: (resource: VersionedResource) => Uint8Array,
): ResourceFraming {
  const known = runs.framed.get(resources);
  if (known !== undefined) return known;
  if (!runs.usedOnce.has(resources)) {
    runs.usedOnce.add(resources);
    return { inline: resources.map(bytesOf) };
  }
  const framed = Object.freeze({ run: frameResourceRun(resources.map(bytesOf)) });
  runs.framed.set(resources, framed);
  return framed;
}

/** How a state-of-the-world response carries `resources` (their `Any` messages). */
export function anyFraming(resources: readonly VersionedResource[]): ResourceFraming {
  return framing(anyRuns, resources, (r) => r.encoded);
}

/** How an incremental response carries `resources` (their `Resource` messages). */
export function deltaFraming(resources: readonly VersionedResource[]): ResourceFraming {
  return framing(deltaRuns, resources, (r) => r.deltaResource);
}

/** A framed response and the nonce written in it. */
export interface FramedResponse {
  /** The whole message, as handed to the transport; shared: never modify it. */
  readonly bytes: Uint8Array;
  /** The nonce in `bytes`, which the proxy's ACK echoes. */
  readonly nonce: string;
}

/**
 * The `inputs` of `ListMemos.sharedResponse`: what a response of `protocol` holds besides its list and nonce, and
 * whether its nonce carries the push version (`nonceVersion`, with distribution tracking).
 */
export function responseInputs(
  protocol: "sotw" | "delta",
  typeUrl: string,
  version: string,
  nonceVersion: string | undefined,
  controlPlane: ControlPlaneInfo | undefined,
): string {
  return JSON.stringify([protocol, typeUrl, version, nonceVersion ?? null, controlPlane ?? null]);
}
