/**
 * The bytes of an Envoy RouteConfiguration assembled from virtual hosts encoded once per snapshot.
 *
 * A sidecar's route configuration lists every service it sees, so the configurations of a mesh's namespaces
 * differ in a few virtual hosts only (the short names of a namespace's own services, what a namespace is
 * shown). Built whole, a VirtualService change re-encoded every virtual host of every namespace's
 * configuration: 100 namespaces × 1000 hosts for one changed host. Here each distinct virtual host is built
 * and encoded once per snapshot, and each configuration copies the bytes of its hosts.
 *
 * The result is byte for byte `encodeAny` of the whole object: protobufjs writes fields in field-number order,
 * and a repeated message field is its elements written one after another, each as its own field.
 *
 * @module
 */
import type protobuf from "protobufjs";
import { encodeMessage, messageTypeForUrl } from "@mesh/proto/any_codec";
import { lenFieldSize, utf8Bytes, WireWriter } from "@mesh/proto/_wire";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { type DerivedMemo, derivedTable } from "../../push/derived_memo.ts";

const VIRTUAL_HOST_URL = "type.googleapis.com/envoy.config.route.v3.VirtualHost";

/** `RouteConfiguration.virtual_hosts`. */
const VIRTUAL_HOSTS_FIELD = 2;

/** `google.protobuf.Any`: `type_url` = 1, `value` = 2. */
const ANY_TYPE_URL_FIELD = 1;
const ANY_VALUE_FIELD = 2;

/** A virtual host to encode: a key naming everything `build` reads, and the host as a plain object. */
export interface EncodableVirtualHost {
  /** Equal keys build equal hosts within one snapshot; the memo's key. */
  readonly key: string;
  /** The VirtualHost as a plain object (`.proto` field names). Called once per key and snapshot. */
  build(): Record<string, unknown>;
}

/** The parts of one route configuration: its fields around `virtual_hosts`, and its hosts in order. */
export interface RouteConfigurationParts {
  /** Fields numbered below `virtual_hosts` (2), e.g. `name`. */
  readonly head: Record<string, unknown>;
  /** The virtual hosts, in order. */
  readonly hosts: readonly EncodableVirtualHost[];
  /** Fields numbered above `virtual_hosts`, e.g. `validate_clusters`. */
  readonly tail: Record<string, unknown>;
}

/** Encoded virtual hosts by key, in the memo of one snapshot. */
const ENCODED_HOSTS = derivedTable<DerivedMemo, string, Uint8Array>("rds.encodedHosts");

/**
 * Encodes a RouteConfiguration as the bytes of a `google.protobuf.Any`, taking each virtual host's bytes from
 * `memo` (one snapshot's) when another configuration of the snapshot had the same key.
 *
 * @throws {RangeError} when a `head` or `tail` field is not numbered on its side of `virtual_hosts`
 * @throws {TypeError} when a part does not fit Envoy's schema, as `encodeAny` does
 */
export function encodeRouteConfigurationAny(
  memo: DerivedMemo,
  parts: RouteConfigurationParts,
  schema: protobuf.Root,
): Uint8Array {
  const routeType = messageTypeForUrl(TYPE_URL.route, schema);
  checkSide(routeType, parts.head, "head", (id) => id < VIRTUAL_HOSTS_FIELD);
  checkSide(routeType, parts.tail, "tail", (id) => id > VIRTUAL_HOSTS_FIELD);
  const head = encodeMessage(TYPE_URL.route, parts.head, schema);
  const tail = encodeMessage(TYPE_URL.route, parts.tail, schema);
  const hosts: Uint8Array[] = [];
  let size = head.length + tail.length;
  for (const host of parts.hosts) {
    const bytes = memo.get(
      ENCODED_HOSTS,
      memo,
      host.key,
      () => encodeMessage(VIRTUAL_HOST_URL, host.build(), schema),
    );
    hosts.push(bytes);
    size += lenFieldSize(VIRTUAL_HOSTS_FIELD, bytes.length);
  }
  const typeUrl = utf8Bytes(TYPE_URL.route);
  const w = new WireWriter(
    lenFieldSize(ANY_TYPE_URL_FIELD, typeUrl.length) + lenFieldSize(ANY_VALUE_FIELD, size),
  );
  w.lenField(ANY_TYPE_URL_FIELD, typeUrl).lenHeader(ANY_VALUE_FIELD, size).raw(head);
  for (const bytes of hosts) w.lenField(VIRTUAL_HOSTS_FIELD, bytes);
  return w.raw(tail).finish();
}

/** Fields written before or after the hosts must be numbered so, or the bytes would not be protobufjs's. */
function checkSide(
  type: protobuf.Type,
  fields: Record<string, unknown>,
  side: string,
  fits: (id: number) => boolean,
): void {
  for (const name of Object.keys(fields)) {
    const field = type.fields[name];
    if (field !== undefined && !fits(field.id)) {
      throw new RangeError(
        `RouteConfiguration field "${name}" (number ${field.id}) cannot go in the ${side}: expected a field ` +
          `numbered ${side === "head" ? "below" : "above"} virtual_hosts (${VIRTUAL_HOSTS_FIELD})`,
      );
    }
  }
}
