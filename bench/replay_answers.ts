/**
 * Which requests the replay server answers, the same whatever transport carries the stream: each stream gets
 * its own answerer, which decodes a request (with the decoder the real server's streams use) and names the
 * type whose captured response answers it, or undefined for a request left unanswered (an ACK).
 *
 * @module
 */
import { decodeDeltaDiscoveryRequest, decodeDiscoveryRequest } from "../proto/discovery_request.ts";

/** Names the type whose response answers a request (raw bytes), or undefined. */
export type Answerer = (bytes: Uint8Array) => string | undefined;

/** State of the world: a request whose names differ from its type's last ones is answered. */
export function sotwAnswerer(): Answerer {
  const watched = new Map<string, string>();
  return (bytes) => {
    const request = decodeDiscoveryRequest(bytes);
    const names = [...request.resource_names].sort().join("\n");
    if (watched.get(request.type_url) === names) return undefined;
    watched.set(request.type_url, names);
    return request.type_url;
  };
}

/** Incremental: a request that subscribes (or opens a type) is answered, an ACK is not. */
export function deltaAnswerer(): Answerer {
  return (bytes) => {
    const request = decodeDeltaDiscoveryRequest(bytes);
    const isAck = request.response_nonce !== "" && request.resource_names_subscribe.length === 0;
    return isAck ? undefined : request.type_url;
  };
}
