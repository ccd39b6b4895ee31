import type { TlsCredential } from "@mesh/shared/credentials/tls_credential";

/** A TLS credential a gateway serves or checks peers with, in PEM. */
export type TlsSecret = TlsCredential;

/**
 * Where gateway credentials (`credentialName`) come from: files on disk, or the orchestrator's Secrets.
 *
 * Implementations never throw for a missing secret: `get` returns undefined, and generators report it.
 */
export interface SecretStore {
  /** The secret `name` in `namespace`, or undefined when there is none. */
  get(namespace: string, name: string): TlsSecret | undefined;
  /** Calls `listener` with the (namespace, name) of every secret that changed; returns an unsubscribe. */
  onChange(listener: (namespace: string, name: string) => void): () => void;
}
