/**
 * Gateway credentials from `MESHD_GATEWAY_CREDENTIALS_DIR`: `<dir>/<namespace>/<credentialName>/` holding
 * `tls.crt`, `tls.key` and optionally `ca.crt`, read by path every few seconds so that a directory replaced
 * or a mounted volume's symbolic link swapped is followed (see `CredentialDirectory`).
 *
 * @module
 */
import { CredentialDirectory } from "@mesh/shared/credentials/credential_dir";
import type { Logger } from "@mesh/shared/log/logger";
import type { SecretStore, TlsSecret } from "./secret_store.ts";

/** How often the directory is read again. */
export const CREDENTIALS_CHECK_MS = 2_000;

/** Options of {@link DirSecretStore}. */
export interface DirSecretStoreOptions {
  readonly dir: string;
  readonly log: Logger;
  readonly checkMs?: number;
  /** Called once for each new problem with a folder. */
  readonly onProblem?: (key: string, message: string) => void;
}

/** A {@link SecretStore} over a directory of credential folders, by namespace. */
export class DirSecretStore implements SecretStore {
  readonly #dir: CredentialDirectory;

  /** A store over `options.dir`; nothing is read until `start`. */
  constructor(options: DirSecretStoreOptions) {
    this.#dir = new CredentialDirectory({
      dir: options.dir,
      layout: "namespaced",
      checkMs: options.checkMs ?? CREDENTIALS_CHECK_MS,
      setting: "MESHD_GATEWAY_CREDENTIALS_DIR",
      log: options.log,
      ...(options.onProblem ? { onProblem: options.onProblem } : {}),
    });
  }

  get(namespace: string, name: string): TlsSecret | undefined {
    return this.#dir.get(`${namespace}/${name}`);
  }

  onChange(listener: (namespace: string, name: string) => void): () => void {
    return this.#dir.onChange((key) => {
      const slash = key.indexOf("/");
      listener(key.slice(0, slash), key.slice(slash + 1));
    });
  }

  /** Reads the directory, then keeps reading it; resolves after the first read. */
  start(): Promise<void> {
    return this.#dir.start();
  }

  /** Stops reading it. */
  stop(): void {
    this.#dir.close();
  }
}
