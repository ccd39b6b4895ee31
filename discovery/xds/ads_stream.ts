/**
 * Serves one ADS stream: decodes requests, admits the proxy on its first request (which must carry a valid
 * node), hands every request to the connection in order, and tears the connection down however the stream
 * ends.
 *
 * @module
 */
import type protobuf from "protobufjs";
import {
  decodeDeltaDiscoveryRequest,
  decodeDeltaDiscoveryRequestSharingNames,
  decodeDiscoveryRequest,
  decodeDiscoveryRequestSharingNames,
  type XdsNode,
} from "@mesh/proto/discovery_request";
import type { Logger } from "@mesh/shared/log/logger";
import { InvalidNodeError, parseProxy, type Proxy } from "../model/proxy.ts";
import type { PushSnapshot } from "../generate/generator.ts";
import type { AdsCall, XdsConnection, XdsProtocol } from "./xds_connection.ts";
import { SendTimeoutError, StreamClosedError } from "@mesh/shared/grpc/send_port";
import * as grpc from "@grpc/grpc-js";
import { type GrpcRefusal, GrpcStatusError } from "@mesh/shared/grpc/grpc_status";
import type { NameListTable } from "./name_list_table.ts";
import { NameLimitError } from "./name_budget.ts";

/** What a stream needs from the server that accepted it. */
export interface StreamHost<P extends PushSnapshot> {
  /** Envoy's v3 schema, for decoding requests. */
  readonly schema: protobuf.Root;
  /** Shares watched-name lists between requests that repeat them; each request decodes its own without. */
  readonly nameLists?: NameListTable;
  /** Where failed requests are logged (refusals go through `refused`). */
  readonly logger: Logger;
  /** Why streams are refused with UNAVAILABLE for now (no snapshot yet, sources syncing), or undefined. */
  notReady(): string | undefined;
  /** Creates the protocol's connection for an admitted proxy and registers it. */
  admit(protocol: XdsProtocol, proxy: Proxy, call: AdsCall): XdsConnection<P>;
  /** Counts an unexpected failure while handling a request. */
  internalError(typeUrl: string, error: unknown): void;
  /**
   * Counts and logs (within a budget per peer) a stream ended by the server: because of what the peer sent (or
   * sent too early), or, with `notReady`, because the server cannot serve yet.
   */
  refused(peer: string, refusal: GrpcRefusal, notReady: boolean): void;
  /** A stream was accepted. */
  streamOpened(): void;
  /** A stream accepted by `streamOpened` ended, however it ended; called once per stream. */
  streamEnded(): void;
}

/**
 * Decides whether the authenticated caller of a stream may be the proxy its node names; undefined admits it.
 * Listeners that authenticate callers (the secure port) pass one per stream.
 */
export type ProxyAuthorizer = (proxy: Proxy) => GrpcRefusal | undefined;

/** The authenticated caller of a stream: the identities it proved, and who it may speak for. */
export interface StreamCaller {
  /** The SPIFFE identities the caller proved (client certificate or token), in accepted trust domains. */
  readonly identities: readonly string[];
  /** The first request's proxy must pass it. */
  readonly authorize: ProxyAuthorizer;
}

/**
 * Serves `call` as a state-of-the-world (`sotw`) or incremental (`delta`) ADS stream until it ends; with
 * an authenticated `caller`, the first request's proxy must pass its check and carries its identities.
 */
export function serveAdsStream<P extends PushSnapshot>(
  host: StreamHost<P>,
  protocol: XdsProtocol,
  call: AdsCall,
  caller?: StreamCaller,
): void {
  let connection: XdsConnection<P> | undefined;
  let ended = false;
  let released = false;
  host.streamOpened();
  const release = () => {
    if (released) return;
    released = true;
    host.streamEnded();
  };
  // Only this stream ends.
  const refuse = (code: grpc.status, details: string, notReady = false) => {
    if (ended) return;
    ended = true;
    host.refused(call.getPeer(), { code, details }, notReady);
    if (connection !== undefined) connection.close(code, details);
    else call.emit("error", new GrpcStatusError(code, details));
    release();
  };
  const peerGone = () => {
    ended = true;
    connection?.closedByPeer();
    release();
  };

  // Made once per stream, not once per request: an ACK allocates no more than its decoding needs.
  const lists = host.nameLists;
  const listOf = lists === undefined ? undefined : (run: Uint8Array) => lists.listOf(run);
  call.on("data", (bytes: Uint8Array) => {
    if (ended || connection?.closed) return;
    let request: { readonly node?: XdsNode; readonly type_url: string };
    try {
      if (protocol === "delta") {
        request = listOf === undefined
          ? decodeDeltaDiscoveryRequest(bytes, host.schema)
          : decodeDeltaDiscoveryRequestSharingNames(bytes, host.schema, listOf);
      } else {
        request = listOf === undefined
          ? decodeDiscoveryRequest(bytes, host.schema)
          : decodeDiscoveryRequestSharingNames(bytes, host.schema, listOf);
      }
    } catch (error) {
      refuse(
        error instanceof NameLimitError ? error.code : grpc.status.INVALID_ARGUMENT,
        (error as Error).message,
      );
      return;
    }
    if (connection === undefined) {
      const admitted = admit(host, protocol, call, request.node, caller);
      if ("refused" in admitted) {
        refuse(admitted.refused.code, admitted.refused.details, admitted.notReady === true);
        return;
      }
      connection = admitted.connection;
      connection.whenClosed.then(release);
    }
    const con = connection;
    // Most requests acknowledge the latest response: on an idle connection that needs no queued work.
    if (con.idle && con.acceptAck(request)) return;
    con.serialize(() => con.handleRequest(request)).catch((error) => {
      if (error instanceof SendTimeoutError || error instanceof StreamClosedError) return;
      if (error instanceof NameLimitError) return refuse(error.code, error.message);
      host.internalError(request.type_url, error);
      host.logger.error("handling ADS request failed", {
        connection: con.id,
        type: request.type_url,
        error: error instanceof Error ? error.message : String(error),
      });
    });
  });
  // The proxy half-closed its side: finish ours normally.
  call.on("end", () => {
    if (ended) return;
    ended = true;
    if (connection !== undefined) connection.close();
    else call.end();
    release();
  });
  call.on("cancelled", peerGone);
  call.on("close", peerGone);
  call.on("error", peerGone);
}

/** The connection for a first request, or the status the stream is refused with. */
function admit<P extends PushSnapshot>(
  host: StreamHost<P>,
  protocol: XdsProtocol,
  call: AdsCall,
  node: XdsNode | undefined,
  caller: StreamCaller | undefined,
): { connection: XdsConnection<P> } | { refused: GrpcRefusal; notReady?: true } {
  const invalid = (details: string) => ({ refused: { code: grpc.status.INVALID_ARGUMENT, details } });
  if (node === undefined || node === null) {
    return invalid(
      "The first request on an ADS stream must carry a node: expected node.id " +
        `"sidecar|router~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>"`,
    );
  }
  let proxy: Proxy;
  try {
    proxy = parseProxy(node);
  } catch (error) {
    if (error instanceof InvalidNodeError) return invalid(error.message);
    throw error;
  }
  const denied = caller?.authorize(proxy);
  if (denied !== undefined) return { refused: denied };
  // Only what the transport proved is trusted: secrets are served to verified identities alone.
  if (caller !== undefined) {
    proxy = Object.freeze({ ...proxy, verifiedIdentities: Object.freeze([...caller.identities]) });
  }
  const notReady = host.notReady();
  if (notReady !== undefined) {
    return {
      refused: {
        code: grpc.status.UNAVAILABLE,
        details: `Discovery is not ready: ${notReady}; retry shortly`,
      },
      notReady: true,
    };
  }
  return { connection: host.admit(protocol, proxy, call) };
}
