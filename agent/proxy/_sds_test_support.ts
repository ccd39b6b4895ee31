/**
 * Test support for the SDS server's tests: a workload secret and a provider that holds it.
 *
 * @module
 */
import type { SecretProvider, WorkloadSecret } from "./workload_secrets.ts";

/** A workload secret of placeholder PEM text, valid from the epoch for an hour. */
export const SECRET: WorkloadSecret = {
  certChainPem: "chain",
  privateKeyPem: "key",
  rootPem: "root",
  notBefore: new Date(0),
  notAfter: new Date(3_600_000),
};

/** Holds {@link SECRET} (or what a test sets) and the listeners a server registered for changes. */
export class FixedSecret implements SecretProvider {
  readonly listeners = new Set<(s: WorkloadSecret) => void>();
  current: WorkloadSecret | undefined = SECRET;
  onChange(listener: (s: WorkloadSecret) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
