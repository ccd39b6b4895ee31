/**
 * Workload secrets as files: `OUTPUT_CERTS` writes the key, chain and roots to a directory on every rotation
 * (for workloads that read them from disk), and `FILE_MOUNTED_CERTS` serves certificates mounted as files
 * instead of asking the CA, following them when they are replaced. Orchestrator volumes replace their files by
 * pointing a `..data` link at a new folder: the files are read through their paths each time, the folder is
 * watched for that swap (as the reference watches the files), and a set read across a swap, whose key is not
 * the chain's, is refused like any other broken set until the next read finds them matching.
 *
 * @module
 */
import { join } from "node:path";
import type { Logger } from "@mesh/shared/log/logger";
import { certificateCertifiesKey, parseCertificateFactsPem } from "@mesh/shared/pki/certificate_facts";
import { importPrivateKeyPem } from "@mesh/shared/pki/private_key_pem";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
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

/**
 * `OUTPUT_CERTS`: writes the provider's current secret, then every new one, into `dir`. Writes run one after
 * another, so two rotations close together cannot leave one's key beside the other's chain; a failed write is
 * logged and the next rotation tries again. Returns the unsubscribe, and resolves once the first write is done.
 */
export async function mirrorSecretFiles(
  dir: string,
  provider: SecretProvider,
  log: Logger,
): Promise<() => void> {
  let queue = Promise.resolve();
  const write = (secret: WorkloadSecret) =>
    queue = queue.then(() =>
      writeSecretFiles(dir, secret).catch((error) =>
        log.warn("cannot write the workload certificate to OUTPUT_CERTS", {
          dir,
          error: (error as Error).message,
        })
      )
    );
  const unsubscribe = provider.onChange(write);
  if (provider.current) await write(provider.current);
  return unsubscribe;
}

/** Options of {@link MountedSecrets}. */
export interface MountedSecretsOptions {
  /** Folder holding `key.pem`, `cert-chain.pem` and `root-cert.pem`. */
  readonly dir: string;
  /** How often the files are looked at for a change when no file event came. */
  readonly checkIntervalMs: number;
  /** After a file event, how long to wait for the rest of a replacement before reading (the reference's 100 ms). */
  readonly debounceMs?: number;
  readonly log: Logger;
  /** Timers of the checks and the debounce (the runtime's when absent). */
  readonly timers?: Timers;
}

/** The reference's `FILE_DEBOUNCE_DURATION` default: a swap's events settle within it. */
const DEBOUNCE_MS = 100;

/**
 * The workload secret read from mounted files (`FILE_MOUNTED_CERTS`), reread when any file changes. A set of
 * files that does not parse (e.g. caught mid-replacement) is logged and the last good secret kept.
 */
export class MountedSecrets implements SecretProvider {
  readonly #options: MountedSecretsOptions;
  readonly #listeners = new Set<(secret: WorkloadSecret) => void>();
  #current?: WorkloadSecret;
  #seen = "";
  readonly #timers: Timers;
  #timer?: unknown;
  #closed = false;
  #lastError = "";
  #watcher?: Deno.FsWatcher;
  /** A read is under way: a file event meanwhile only marks `#changed`, and the read reschedules. */
  #reading = false;
  #changed = false;

  constructor(options: MountedSecretsOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
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

  /** Reads the files now, then after every change in their folder and on every check interval. */
  start(): void {
    void this.#tick();
    void this.#watch();
  }

  /** Stops looking at the files. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#watcher?.close();
  }

  /** A file event brings the next read forward to `debounceMs` from now; the interval check stays the fallback. */
  async #watch(): Promise<void> {
    try {
      this.#watcher = Deno.watchFs(this.#options.dir, { recursive: false });
      for await (const _event of this.#watcher) {
        if (this.#closed) break;
        this.#changed = true;
        if (!this.#reading) this.#schedule(this.#options.debounceMs ?? DEBOUNCE_MS);
      }
    } catch (error) {
      if (!this.#closed) {
        this.#options.log.warn(
          "cannot watch the mounted certificates; reading them on the check interval only",
          {
            dir: this.#options.dir,
            error: (error as Error).message,
          },
        );
      }
    }
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
    const [leaf] = parseCertificateFactsPem(certChainPem, join(dir, SECRET_FILES.chain));
    if (leaf === undefined) {
      throw new Error(`FILE_MOUNTED_CERTS: no certificate in ${join(dir, SECRET_FILES.chain)}`);
    }
    if (parseCertificateFactsPem(rootPem, join(dir, SECRET_FILES.root)).length === 0) {
      throw new Error(`FILE_MOUNTED_CERTS: no certificate in ${join(dir, SECRET_FILES.root)}`);
    }
    if (!privateKeyPem.includes("PRIVATE KEY-----")) {
      throw new Error(`FILE_MOUNTED_CERTS: no PEM private key in ${join(dir, SECRET_FILES.key)}`);
    }
    const keys = await importPrivateKeyPem(privateKeyPem, join(dir, SECRET_FILES.key));
    if (!await certificateCertifiesKey(leaf, keys.publicKey)) {
      throw new Error(
        `FILE_MOUNTED_CERTS: the key in ${join(dir, SECRET_FILES.key)} is not the one ${
          join(dir, SECRET_FILES.chain)
        } certifies (read during a replacement?)`,
      );
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

  #schedule(ms: number): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = this.#timers.setTimeout(() => void this.#tick(), ms);
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#reading = true;
    this.#changed = false;
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
    this.#reading = false;
    if (!this.#closed) {
      this.#schedule(this.#changed ? this.#options.debounceMs ?? DEBOUNCE_MS : this.#options.checkIntervalMs);
    }
  }
}
