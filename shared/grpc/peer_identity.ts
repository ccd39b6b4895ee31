/**
 * What a handler may know of its peer: the verified client certificate on a TLS listener and the peer address.
 *
 * @module
 */
import type * as grpc from "@grpc/grpc-js";
import { baseServerCall } from "./base_server_call.ts";

/** The call surface peer identity reads; every grpc-js server call has it. */
export type PeerCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, "getAuthContext" | "getPeer">;

/**
 * The DER bytes of the client's leaf certificate when the connection is TLS and the certificate chained to the
 * listener's roots; undefined for plaintext, for a client without a certificate and for an unverified one.
 */
export function peerCertificateDer(call: PeerCall): Uint8Array | undefined {
  const raw = call.getAuthContext()?.sslPeerCertificate?.raw;
  return raw && raw.byteLength > 0 ? new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength) : undefined;
}

interface DetailedPeerCertificate {
  readonly raw?: Uint8Array;
  readonly issuerCertificate?: DetailedPeerCertificate;
}

/** Longest chain read; real chains are 2 to 4 certificates. */
const MAX_CHAIN = 10;

/**
 * The verified client certificate chain, leaf first and the trust anchor it was verified against last (the
 * runtime reports the anchor even when the peer did not send it); undefined when `peerCertificateDer` would
 * be, or when the call's connection cannot be read. Callers decide from the anchor which roots vouched for the
 * peer. Reads the TLS socket under a grpc-js server call.
 */
export function peerCertificateChainDer(call: PeerCall): Uint8Array[] | undefined {
  if (peerCertificateDer(call) === undefined) return undefined;
  // deno-lint-ignore no-explicit-any
  const socket = (baseServerCall(call)?.stream as any)?.session?.socket;
  if (!socket?.authorized || typeof socket.getPeerCertificate !== "function") return undefined;
  const chain: Uint8Array[] = [];
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && cert.raw.byteLength > 0 && chain.length < MAX_CHAIN) {
    chain.push(new Uint8Array(cert.raw.buffer, cert.raw.byteOffset, cert.raw.byteLength));
    if (cert.issuerCertificate === undefined || cert.issuerCertificate === cert) break;
    cert = cert.issuerCertificate;
  }
  return chain.length > 0 ? chain : undefined;
}

/** The peer's address as grpc-js reports it (`127.0.0.1:53412`, `[::1]:53412`, or the socket path). */
export function peerAddress(call: PeerCall): string {
  return call.getPeer();
}

/**
 * The peer's IP address without its port (`127.0.0.1`, `::1`), the key of per-caller budgets; undefined on a
 * Unix socket or when grpc-js does not know it.
 */
export function peerHost(call: PeerCall): string | undefined {
  const peer = call.getPeer();
  const colon = peer.lastIndexOf(":");
  if (colon <= 0 || !/^\d+$/.test(peer.slice(colon + 1))) return undefined;
  const host = peer.slice(0, colon);
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
