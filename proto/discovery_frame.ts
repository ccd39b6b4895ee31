/**
 * Frames `DiscoveryResponse` and `DeltaDiscoveryResponse` messages by hand from already-encoded
 * `google.protobuf.Any` bytes, so a push copies each cached resource once and never re-encodes it.
 *
 * Responses are framed with gRPC's message prefix in front of them, in the same buffer, so the transport sends
 * them without copying (see `grpc_prefix.ts`).
 *
 * Field numbers are those of `envoy/service/discovery/v3/discovery.proto`. Fields are written in field-number
 * order and proto3 defaults (empty strings, false) are left out, which is what protobufjs writes for a message
 * holding only non-default values; decoders accept any order.
 *
 * @module
 */
import { lenFieldSize, utf8Bytes, varintFieldSize, WireWriter } from "./_wire.ts";

/** `envoy.config.core.v3.ControlPlane`: identifies the control plane that sent a response. */
export interface ControlPlaneInfo {
  /** The control plane's identity, e.g. its pod name. */
  readonly identifier: string;
}

/** The parts of a state-of-the-world `DiscoveryResponse`. */
export interface DiscoveryResponseParts {
  /** The version of the resources being sent. */
  readonly version_info: string;
  /** Each element is one encoded `google.protobuf.Any` (see `encodeAny`). */
  readonly resources: readonly Uint8Array[];
  /**
   * More resources, already framed as the `resources` field by {@link frameResourceRun}; written after
   * `resources`. Proxies sent the same list then share one framing of it.
   */
  readonly resource_run?: Uint8Array;
  /** The type URL of every resource in the response. */
  readonly type_url: string;
  /** The nonce the proxy echoes in its ACK or NACK. */
  readonly nonce: string;
  /** Marks the response as a canary; false (the default) is not written. */
  readonly canary?: boolean;
  /** Identifies the sender. */
  readonly control_plane?: ControlPlaneInfo;
}

/** One `envoy.service.discovery.v3.Resource` of a delta response. */
export interface DeltaResourceParts {
  /** The resource name. */
  readonly name: string;
  /** The resource version. */
  readonly version: string;
  /** One encoded `google.protobuf.Any`; absent for a TTL heartbeat. */
  readonly resource?: Uint8Array;
  /** Other names the resource answers to (VHDS). */
  readonly aliases?: readonly string[];
  /** Non-negative; `nanos` in 0..999999999. */
  readonly ttl?: { readonly seconds: number | bigint; readonly nanos?: number };
  /** Whether the proxy may cache the resource. */
  readonly cache_control?: { readonly do_not_cache: boolean };
}

/** The parts of an incremental `DeltaDiscoveryResponse`. */
export interface DeltaDiscoveryResponseParts {
  /** The version of the whole resource set, for debugging. */
  readonly system_version_info: string;
  /** The added or changed resources. */
  readonly resources: readonly DeltaResourceParts[];
  /**
   * More added or changed resources, each already encoded as an `envoy.service.discovery.v3.Resource`
   * (see {@link encodeDeltaResource}); written after `resources`.
   */
  readonly encoded_resources?: readonly Uint8Array[];
  /** More resources, already framed by {@link frameResourceRun} from encoded `Resource` messages; written last. */
  readonly resource_run?: Uint8Array;
  /** The type URL of every resource in the response. */
  readonly type_url: string;
  /** Names of resources the proxy should drop. */
  readonly removed_resources?: readonly string[];
  /** The nonce the proxy echoes in its ACK or NACK. */
  readonly nonce: string;
  /** Identifies the sender. */
  readonly control_plane?: ControlPlaneInfo;
}

/** Size of an optional proto3 string field: nothing when empty. */
function stringFieldSize(field: number, bytes: Uint8Array): number {
  return bytes.length === 0 ? 0 : lenFieldSize(field, bytes.length);
}

function writeString(w: WireWriter, field: number, bytes: Uint8Array): void {
  if (bytes.length > 0) w.lenField(field, bytes);
}

/** Encoded `ControlPlane` payload (its only field is identifier = 1). */
function controlPlaneBytes(controlPlane: ControlPlaneInfo): Uint8Array {
  const identifier = utf8Bytes(controlPlane.identifier);
  const w = new WireWriter(stringFieldSize(1, identifier));
  writeString(w, 1, identifier);
  return w.finish();
}

/**
 * Frames encoded messages as the `resources` field (2) of a response, back to back: `google.protobuf.Any`
 * messages for {@link DiscoveryResponseParts.resource_run}, `Resource` messages (see
 * {@link encodeDeltaResource}) for {@link DeltaDiscoveryResponseParts.resource_run}.
 */
export function frameResourceRun(resources: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const resource of resources) size += lenFieldSize(2, resource.length);
  const w = new WireWriter(size);
  for (const resource of resources) w.lenField(2, resource);
  return w.finish();
}

/** Encodes a DiscoveryResponse whose resources are already-encoded Any messages. */
export function frameDiscoveryResponse(parts: DiscoveryResponseParts): Uint8Array {
  const version = utf8Bytes(parts.version_info);
  const typeUrl = utf8Bytes(parts.type_url);
  const nonce = utf8Bytes(parts.nonce);
  const controlPlane = parts.control_plane === undefined ? undefined : controlPlaneBytes(parts.control_plane);
  let size = stringFieldSize(1, version) + stringFieldSize(4, typeUrl) + stringFieldSize(5, nonce);
  for (const resource of parts.resources) size += lenFieldSize(2, resource.length);
  size += parts.resource_run?.length ?? 0;
  if (parts.canary === true) size += varintFieldSize(3, 1);
  if (controlPlane !== undefined) size += lenFieldSize(6, controlPlane.length);

  const w = new WireWriter(size, { grpcPrefix: true });
  writeString(w, 1, version);
  for (const resource of parts.resources) w.lenField(2, resource);
  if (parts.resource_run !== undefined) w.raw(parts.resource_run);
  if (parts.canary === true) w.varintField(3, 1);
  writeString(w, 4, typeUrl);
  writeString(w, 5, nonce);
  if (controlPlane !== undefined) w.lenField(6, controlPlane);
  return w.finish();
}

/** A delta resource with its strings encoded and its own size known. */
interface PreparedResource {
  readonly version: Uint8Array;
  readonly resource?: Uint8Array;
  readonly name: Uint8Array;
  readonly aliases: Uint8Array[];
  readonly ttl?: Uint8Array;
  readonly cacheControl?: Uint8Array;
  readonly size: number;
}

/** Encoded `google.protobuf.Duration` payload (seconds = 1, nanos = 2). */
function durationBytes(
  ttl: { readonly seconds: number | bigint; readonly nanos?: number },
  path: string,
): Uint8Array {
  const nanos = ttl.nanos ?? 0;
  const secondsOk = typeof ttl.seconds === "bigint"
    ? ttl.seconds >= 0n && ttl.seconds < 2n ** 63n
    : Number.isSafeInteger(ttl.seconds) && ttl.seconds >= 0;
  if (!secondsOk || !Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999) {
    throw new RangeError(
      `Invalid ${path}: expected non-negative integer seconds and nanos in 0..999999999, ` +
        `got seconds "${ttl.seconds}" and nanos "${nanos}"`,
    );
  }
  const seconds = ttl.seconds;
  const hasSeconds = seconds !== 0 && seconds !== 0n;
  const w = new WireWriter(
    (hasSeconds ? varintFieldSize(1, seconds) : 0) + (nanos ? varintFieldSize(2, nanos) : 0),
  );
  if (hasSeconds) w.varintField(1, seconds);
  if (nanos) w.varintField(2, nanos);
  return w.finish();
}

function prepareResource(resource: DeltaResourceParts, index: number): PreparedResource {
  const version = utf8Bytes(resource.version);
  const name = utf8Bytes(resource.name);
  const aliases = (resource.aliases ?? []).map(utf8Bytes);
  const ttl = resource.ttl === undefined ? undefined : durationBytes(resource.ttl, `resources[${index}].ttl`);
  const cacheControl = resource.cache_control === undefined
    ? undefined
    // CacheControl's only field is do_not_cache = 1; false is the default and is left out.
    : resource.cache_control.do_not_cache
    ? Uint8Array.of(0x08, 0x01)
    : new Uint8Array(0);
  let size = stringFieldSize(1, version) + stringFieldSize(3, name);
  if (resource.resource !== undefined) size += lenFieldSize(2, resource.resource.length);
  for (const alias of aliases) size += lenFieldSize(4, alias.length);
  if (ttl !== undefined) size += lenFieldSize(6, ttl.length);
  if (cacheControl !== undefined) size += lenFieldSize(7, cacheControl.length);
  return { version, resource: resource.resource, name, aliases, ttl, cacheControl, size };
}

function writeResource(w: WireWriter, r: PreparedResource): void {
  writeString(w, 1, r.version);
  if (r.resource !== undefined) w.lenField(2, r.resource);
  writeString(w, 3, r.name);
  for (const alias of r.aliases) w.lenField(4, alias);
  if (r.ttl !== undefined) w.lenField(6, r.ttl);
  if (r.cacheControl !== undefined) w.lenField(7, r.cacheControl);
}

/**
 * Encodes one `envoy.service.discovery.v3.Resource`, for {@link DeltaDiscoveryResponseParts.encoded_resources}:
 * a resource sent to many proxies is then encoded once.
 *
 * @throws {RangeError} when the ttl is negative or its nanos are out of range
 */
export function encodeDeltaResource(resource: DeltaResourceParts): Uint8Array {
  const prepared = prepareResource(resource, 0);
  const w = new WireWriter(prepared.size);
  writeResource(w, prepared);
  return w.finish();
}

/**
 * Encodes a DeltaDiscoveryResponse whose resources carry already-encoded Any messages.
 *
 * @throws {RangeError} when a resource's ttl is negative or its nanos are out of range
 */
export function frameDeltaDiscoveryResponse(parts: DeltaDiscoveryResponseParts): Uint8Array {
  const systemVersion = utf8Bytes(parts.system_version_info);
  const typeUrl = utf8Bytes(parts.type_url);
  const nonce = utf8Bytes(parts.nonce);
  const removed = (parts.removed_resources ?? []).map(utf8Bytes);
  const resources = parts.resources.map(prepareResource);
  const controlPlane = parts.control_plane === undefined ? undefined : controlPlaneBytes(parts.control_plane);
  let size = stringFieldSize(1, systemVersion) + stringFieldSize(4, typeUrl) + stringFieldSize(5, nonce);
  for (const r of resources) size += lenFieldSize(2, r.size);
  for (const encoded of parts.encoded_resources ?? []) size += lenFieldSize(2, encoded.length);
  size += parts.resource_run?.length ?? 0;
  for (const name of removed) size += lenFieldSize(6, name.length);
  if (controlPlane !== undefined) size += lenFieldSize(7, controlPlane.length);

  const w = new WireWriter(size, { grpcPrefix: true });
  writeString(w, 1, systemVersion);
  for (const r of resources) {
    w.lenHeader(2, r.size);
    writeResource(w, r);
  }
  for (const encoded of parts.encoded_resources ?? []) w.lenField(2, encoded);
  if (parts.resource_run !== undefined) w.raw(parts.resource_run);
  writeString(w, 4, typeUrl);
  writeString(w, 5, nonce);
  for (const name of removed) w.lenField(6, name);
  if (controlPlane !== undefined) w.lenField(7, controlPlane);
  return w.finish();
}
