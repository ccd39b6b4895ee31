/**
 * The agent's own name table subscription on one relayed ADS stream, as Istio's agent makes it: after the
 * proxy's first request on each upstream stream (which carries the node), the agent asks for the name table
 * without names; each name table response is taken out of the relay, handed to the DNS proxy, and
 * acknowledged. A table that cannot be read is refused (NACK) and the last good one stays.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import protobuf from "protobufjs";
import * as grpc from "@grpc/grpc-js";
import {
  decodeNameTableAny,
  NAME_TABLE_TYPE_URL,
  NAME_TABLE_TYPE_URLS,
  type NameTable,
} from "@mesh/proto/name_table";
import type { Logger } from "@mesh/shared/log/logger";
import { encodeDiscoveryRequest, type OwnRequest, readDiscoveryResponse } from "./discovery_wire.ts";

/** Where the name tables the discovery server sends go. */
export interface NameTableSubscription {
  /** Takes each table; called in the order the tables came. */
  onTable(table: NameTable): void;
}

/** Where `type_url` sits in a DiscoveryResponse. */
const TYPE_URL_FIELD = 4;

/**
 * The `type_url` of an encoded DiscoveryResponse, read without decoding its resources; empty when the bytes
 * do not say.
 */
export function responseTypeUrl(bytes: Uint8Array): string {
  try {
    const reader = protobuf.Reader.create(bytes);
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag >>> 3 === TYPE_URL_FIELD && (tag & 7) === 2) return reader.string();
      reader.skipType(tag & 7);
    }
  } catch {
    // Not a readable message: the relay passes it on as it is.
  }
  return "";
}

interface Writable {
  write(data: Buffer): unknown;
}

/** The name table subscription of one proxy stream, across its upstream streams. */
export class NameTableStream {
  readonly #subscription: NameTableSubscription;
  readonly #log: Logger;
  #subscribed = false;

  /** A subscription that sends its first request on the first `subscribe`. */
  constructor(subscription: NameTableSubscription, log: Logger) {
    this.#subscription = subscription;
    this.#log = log;
  }

  /** A new upstream stream opened: the next `subscribe` asks again. */
  opened(): void {
    this.#subscribed = false;
  }

  /** Asks for the name table on `upstream`, once per upstream stream. */
  subscribe(upstream: Writable): void {
    if (this.#subscribed) return;
    this.#subscribed = true;
    this.#send(upstream, { typeUrl: NAME_TABLE_TYPE_URL });
  }

  /** True when `data` was a name table response, now handled and acknowledged on `upstream`. */
  take(data: Uint8Array, upstream: Writable): boolean {
    const typeUrl = responseTypeUrl(data);
    if (!NAME_TABLE_TYPE_URLS.has(typeUrl)) return false;
    let response;
    try {
      response = readDiscoveryResponse(data);
      const tables = response.resources.map((any) => decodeNameTableAny(any));
      this.#subscription.onTable(Object.assign({}, ...tables));
    } catch (error) {
      this.#log.warn("cannot read the name table; keeping the last one", { error: (error as Error).message });
      this.#send(upstream, {
        typeUrl,
        responseNonce: response?.nonce ?? "",
        errorDetail: {
          code: grpc.status.INVALID_ARGUMENT,
          message: `Invalid name table: ${(error as Error).message}`.slice(0, 200),
        },
      });
      return true;
    }
    this.#send(upstream, { typeUrl, versionInfo: response.versionInfo, responseNonce: response.nonce });
    return true;
  }

  #send(upstream: Writable, request: OwnRequest): void {
    const bytes = encodeDiscoveryRequest(request);
    upstream.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }
}
