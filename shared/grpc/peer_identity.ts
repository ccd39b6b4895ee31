/**
 * What a handler may know of its peer: the verified client certificate on a TLS listener and the peer address.
 *
 * @module
 */
import type * as grpc from "@grpc/grpc-js";

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

/** The peer's address as grpc-js reports it (`127.0.0.1:53412`, `[::1]:53412`, or the socket path). */
export function peerAddress(call: PeerCall): string {
  return call.getPeer();
}
