/**
 * Several secret stores as one: the first that holds a name wins (the orchestrator's Secrets before the
 * credentials directory), and a change in any of them is announced.
 *
 * @module
 */
import type { SecretStore, TlsSecret } from "./secret_store.ts";

/** The stores in order of precedence, as one; undefined when there are none. */
export function mergeSecretStores(stores: readonly (SecretStore | undefined)[]): SecretStore | undefined {
  const present = stores.filter((s): s is SecretStore => s !== undefined);
  if (present.length <= 1) return present[0];
  return {
    get(namespace: string, name: string): TlsSecret | undefined {
      for (const store of present) {
        const secret = store.get(namespace, name);
        if (secret !== undefined) return secret;
      }
      return undefined;
    },
    onChange(listener: (namespace: string, name: string) => void): () => void {
      const unsubscribes = present.map((store) => store.onChange(listener));
      return () => unsubscribes.forEach((unsubscribe) => unsubscribe());
    },
  };
}
