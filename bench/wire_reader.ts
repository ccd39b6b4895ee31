/**
 * A minimal protobuf wire reader for the load clients: the top-level fields of `DiscoveryResponse` and
 * `DeltaDiscoveryResponse`, and the name (field 1) of each resource, without decoding resources. A thousand
 * simulated proxies cannot afford full decoding of every push on the client's one core.
 *
 * @module
 */

const utf8 = new TextDecoder();

/** Top-level fields of a (delta) discovery response. */
export interface ResponseHead {
  /** `version_info` (state of the world) or `system_version_info` (delta). */
  readonly version: string;
  readonly typeUrl: string;
  readonly nonce: string;
  /** How many resources it carries. */
  readonly resourceCount: number;
  /** Delta only: `removed_resources`. */
  readonly removed: readonly string[];
}

/** One length-delimited field: its number and the byte range of its payload. */
interface LenField {
  readonly field: number;
  readonly start: number;
  readonly end: number;
}

/** Reads a varint at `pos`; returns [value, next position]. Values above 2^53 lose precision, unused here. */
function varint(bytes: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (pos >= bytes.length) throw new RangeError(`Truncated varint at byte ${pos}`);
    const b = bytes[pos++];
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) return [value, pos];
    scale *= 128;
  }
}

/** Calls `visit` for every length-delimited field in `bytes[start, end)`, skipping the others. */
function eachLenField(bytes: Uint8Array, start: number, end: number, visit: (f: LenField) => void): void {
  let pos = start;
  while (pos < end) {
    const [tag, afterTag] = varint(bytes, pos);
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    pos = afterTag;
    if (wire === 0) {
      pos = varint(bytes, pos)[1];
    } else if (wire === 1) {
      pos += 8;
    } else if (wire === 5) {
      pos += 4;
    } else if (wire === 2) {
      const [length, payload] = varint(bytes, pos);
      pos = payload + length;
      if (pos > end) throw new RangeError(`Field ${field} overruns its message at byte ${payload}`);
      visit({ field, start: payload, end: pos });
    } else {
      throw new RangeError(`Unsupported wire type ${wire} of field ${field} at byte ${afterTag}`);
    }
  }
}

function text(bytes: Uint8Array, f: LenField): string {
  return utf8.decode(bytes.subarray(f.start, f.end));
}

/** Reads the head of a `DiscoveryResponse` (delta: `DeltaDiscoveryResponse`). */
export function readResponseHead(bytes: Uint8Array, delta: boolean): ResponseHead {
  let version = "";
  let typeUrl = "";
  let nonce = "";
  let resourceCount = 0;
  const removed: string[] = [];
  eachLenField(bytes, 0, bytes.length, (f) => {
    if (f.field === 1) version = text(bytes, f);
    else if (f.field === 2) resourceCount++;
    else if (f.field === 4) typeUrl = text(bytes, f);
    else if (f.field === 5) nonce = text(bytes, f);
    else if (delta && f.field === 6) removed.push(text(bytes, f));
  });
  return { version, typeUrl, nonce, resourceCount, removed };
}

/** The first string field 1 of a message range (the name of Cluster, Listener, RouteConfiguration, CLA). */
function firstName(bytes: Uint8Array, start: number, end: number): string {
  let name = "";
  eachLenField(bytes, start, end, (f) => {
    if (name === "" && f.field === 1) name = text(bytes, f);
  });
  return name;
}

/**
 * The names of the resources of a response, read from the resources themselves (state of the world: field
 * 1 of each Any's value) or from the delta `Resource.name` (field 3).
 */
export function readResourceNames(bytes: Uint8Array, delta: boolean): string[] {
  const names: string[] = [];
  eachLenField(bytes, 0, bytes.length, (resource) => {
    if (resource.field !== 2) return;
    if (delta) {
      eachLenField(bytes, resource.start, resource.end, (f) => {
        if (f.field === 3) names.push(text(bytes, f));
      });
      return;
    }
    eachLenField(bytes, resource.start, resource.end, (f) => {
      if (f.field === 2) names.push(firstName(bytes, f.start, f.end));
    });
  });
  return names;
}

/**
 * The names an xDS client asks EDS for after a CDS response, as Envoy and gRPC do: for each cluster with an
 * `eds_cluster_config` (Cluster field 3), its `service_name` (field 2 of that) or else the cluster's name.
 * Static, original-destination and DNS clusters have no endpoints over EDS.
 */
export function readEdsServiceNames(bytes: Uint8Array, delta: boolean): string[] {
  const names: string[] = [];
  const cluster = (value: LenField) => {
    let name = "";
    let eds: LenField | undefined;
    eachLenField(bytes, value.start, value.end, (f) => {
      if (f.field === 1 && name === "") name = text(bytes, f);
      else if (f.field === 3) eds = f;
    });
    if (eds === undefined) return;
    let service = "";
    eachLenField(bytes, eds.start, eds.end, (f) => {
      if (f.field === 2) service = text(bytes, f);
    });
    names.push(service || name);
  };
  // The value (field 2) of an Any; a delta `Resource` holds its Any in field 2 as well.
  const field2 = (f: LenField, visit: (inner: LenField) => void) =>
    eachLenField(bytes, f.start, f.end, (inner) => inner.field === 2 && visit(inner));
  eachLenField(bytes, 0, bytes.length, (resource) => {
    if (resource.field !== 2) return;
    if (delta) field2(resource, (any) => field2(any, cluster));
    else field2(resource, cluster);
  });
  return names;
}

/** The encoded `Any` values of a state-of-the-world response, in order. */
export function readAnyResources(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  eachLenField(bytes, 0, bytes.length, (f) => {
    if (f.field === 2) out.push(bytes.subarray(f.start, f.end));
  });
  return out;
}
