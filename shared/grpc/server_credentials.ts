/**
 * grpc-js server credentials for a listener: insecure, TLS, or TLS that asks for client certificates and either
 * requires them or accepts peers without one.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";

/** TLS material of a listener, PEM text. */
export interface GrpcTls {
  /** The server's private key. */
  readonly keyPem: string;
  /** The server's certificate, then its intermediates. */
  readonly certChainPem: string;
  /** Roots that client certificates must chain to; given, clients are asked for a certificate. */
  readonly caPem?: string;
  /** Refuse the handshake of a client without a certificate that chains to `caPem`; needs `caPem`. */
  readonly requireClientCert?: boolean;
}

/**
 * Fixed TLS key material with the client-certificate policy stated outright: grpc-js's own `createSsl` can only
 * require client certificates or not ask for them, and its provider-based credentials swap the secure context
 * after the server starts, which the runtime's `node:http2` does not support.
 */
class FixedTlsCredentials extends grpc.ServerCredentials {
  constructor(tls: GrpcTls) {
    super({
      // Ask for a certificate only when there are roots to verify it against; require it only when told to.
      requestCert: tls.caPem !== undefined,
      rejectUnauthorized: tls.requireClientCert ?? false,
    }, {
      key: Buffer.from(tls.keyPem),
      cert: Buffer.from(tls.certChainPem),
      ...(tls.caPem !== undefined ? { ca: Buffer.from(tls.caPem) } : {}),
    });
  }
  _equals(other: grpc.ServerCredentials): boolean {
    return this === other;
  }
}

/**
 * The credentials for `tls`, or insecure ones when it is absent.
 *
 * @throws {RangeError} when a client certificate is required without roots to verify it against
 */
export function serverCredentials(tls: GrpcTls | undefined, flag: string): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  if (tls.requireClientCert && !tls.caPem) {
    throw new RangeError(
      `Cannot require client certificates on ${flag}: no CA certificates given to verify them against`,
    );
  }
  return new FixedTlsCredentials(tls);
}
