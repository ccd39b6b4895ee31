/**
 * Workload secrets as files: `OUTPUT_CERTS` writes the key, chain and roots to a directory on every rotation
 * (for workloads that read them from disk), and `FILE_MOUNTED_CERTS` serves certificates mounted as files
 * instead of asking the CA, following them when they are replaced.
 *
 * @module
 */
import { join } from "node:path";
import type { Logger } from "../../shared/log/logger.ts";
import { parseCertificatesPem } from "../../shared/pki/mod.ts";
import type { SecretProvider, WorkloadSecret } from "./workload_secrets.ts";

/** File names Istio uses for a workload's key material, in `OUTPUT_CERTS` and mounted certificate folders. */
export const SECRET_FILES = Object.freeze({
  key: "key.pem",
  chain: "cert-chain.pem",
  root: "root-cert.pem",
});

/** Writes `text` to `path` whole or not at all: a reader never sees a half-written key. */
async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const temp = `${path}.tmp-${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(temp, text, { mode });
    await Deno.chmod(temp, mode);
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/**
 * Writes `secret` into `dir` (created when missing): the private key readable by the owner only, chain and
 * roots world-readable.
 *
 * @throws {Deno.errors.PermissionDenied} and other file errors, naming the path
 */
export async function writeSecretFiles(dir: string, secret: WorkloadSecret): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await writeAtomically(join(dir, SECRET_FILES.key), secret.privateKeyPem, 0o600);
  await writeAtomically(join(dir, SECRET_FILES.chain), secret.certChainPem, 0o644);
  await writeAtomically(join(dir, SECRET_FILES.root), secret.rootPem, 0o644);
}

/** Options of {@link MountedSecrets}. */
export interface MountedSecretsOptions {
  /** Folder holding `key.pem`, `cert-chain.pem` and `root-cert.pem`. */
  readonly dir: string;
  /** How often the files are looked at for a change. */
  readonly checkIntervalMs: number;
  readonly log: Logger;
}

/**
 * The workload secret read from mounted files (`FILE_MOUNTED_CERTS`), reread when any file changes. A set of
 * files that does not parse (e.g. caught mid-replacement) is logged and the last good secret kept.
 */
export class MountedSecrets implements SecretProvider {
  readonly #options: MountedSecretsOptions;
  readonly #listeners = new Set<(secret: WorkloadSecret) => void>();
  #current?: WorkloadSecret;
  #seen = "";
  #timer?: ReturnType<typeof setTimeout>;
  #closed = false;
  #lastError = "";

  constructor(options: MountedSecretsOptions) {
    this.#options = options;
  }

  /** The secret last read, if the files were ever complete. */
  get current(): WorkloadSecret | undefined {
    return this.#current;
  }

  /** Subscribes to new secrets; returns an unsubscribe. */
  onChange(listener: (secret: WorkloadSecret) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reads the files now, then on every check interval. */
  start(): void {
    void this.#tick();
  }

  /** Stops looking at the files. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  /**
   * Reads the three files; notifies listeners when their content changed.
   *
   * @throws {Error} naming the folder and the file that is missing or does not parse
   */
  async load(): Promise<WorkloadSecret | undefined> {
    const { dir } = this.#options;
    const read = async (name: string) => {
      try {
        return await Deno.readTextFile(join(dir, name));
      } catch (error) {
        throw new Error(`FILE_MOUNTED_CERTS: cannot read ${join(dir, name)}: ${(error as Error).message}`);
      }
    };
    const [privateKeyPem, certChainPem, rootPem] = await Promise.all([
      read(SECRET_FILES.key),
      read(SECRET_FILES.chain),
      read(SECRET_FILES.root),
    ]);
    const text = privateKeyPem + certChainPem + rootPem;
    if (text === this.#seen) return this.#current;
    const [leaf] = parseCertificatesPem(certChainPem, join(dir, SECRET_FILES.chain));
    if (leaf === undefined) {
      throw new Error(`FILE_MOUNTED_CERTS: no certificate in ${join(dir, SECRET_FILES.chain)}`);
    }
    if (parseCertificatesPem(rootPem, join(dir, SECRET_FILES.root)).length === 0) {
      throw new Error(`FILE_MOUNTED_CERTS: no certificate in ${join(dir, SECRET_FILES.root)}`);
    }
    if (!privateKeyPem.includes("PRIVATE KEY-----")) {
      throw new Error(`FILE_MOUNTED_CERTS: no PEM private key in ${join(dir, SECRET_FILES.key)}`);
    }
    const secret: WorkloadSecret = {
      certChainPem,
      privateKeyPem,
      rootPem,
      notBefore: leaf.notBefore,
      notAfter: leaf.notAfter,
    };
    this.#seen = text;
    this.#current = secret;
    this.#options.log.info("mounted workload certificate loaded", {
      dir,
      notAfter: secret.notAfter.toISOString(),
    });
    for (const listener of [...this.#listeners]) listener(secret);
    return secret;
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.load();
      this.#lastError = "";
    } catch (error) {
      const message = (error as Error).message;
      if (message !== this.#lastError) {
        this.#options.log.warn("mounted certificates are not usable; keeping the last good ones", {
          error: message,
        });
        this.#lastError = message;
      }
    }
    if (!this.#closed) this.#timer = setTimeout(() => void this.#tick(), this.#options.checkIntervalMs);
  }
}
