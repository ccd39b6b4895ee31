/**
 * TLS credentials from a directory: one folder per credential holding `tls.crt`, `tls.key` and optionally
 * `ca.crt` (or `cert`/`key`/`cacert`), the way an orchestrator mounts a TLS Secret as a volume. With the
 * `namespaced` layout the folders sit one level deeper, under their namespace: `<dir>/<namespace>/<name>/`.
 *
 * The directory is read by path on every check, never through a kernel watch on an inode: a folder renamed
 * away and replaced, removed and recreated, or a `..data` symbolic link swapped (how mounted volumes update)
 * is seen at the next check. A folder whose files do not make a credential (missing, unreadable, not PEM, or
 * caught half-written) is skipped alone and reported once per distinct problem; the credential it held before
 * stays served until the folder is right again or removed.
 *
 * @module
 */
import { join } from "node:path";
import type { Logger } from "../log/logger.ts";
import {
  checkTlsCredential,
  CREDENTIAL_KEYS,
  type TlsCredential,
  tlsCredentialOf,
} from "./tls_credential.ts";

/** A file larger than this is not a certificate or key; it is refused instead of read. */
export const MAX_CREDENTIAL_FILE_BYTES = 1024 * 1024;

/** Options of {@link CredentialDirectory}. */
export interface CredentialDirectoryOptions {
  /** The directory, by path. */
  readonly dir: string;
  /** `flat`: `<dir>/<name>/`, keyed `name`; `namespaced`: `<dir>/<namespace>/<name>/`, keyed `namespace/name`. */
  readonly layout: "flat" | "namespaced";
  /** How often the directory is read again. */
  readonly checkMs: number;
  /** The setting that named the directory, for messages. */
  readonly setting: string;
  readonly log: Logger;
  /** Called once for each new problem with a folder (for a metric); the log line is written regardless. */
  readonly onProblem?: (key: string, message: string) => void;
}

const ALL_KEYS = [...CREDENTIAL_KEYS.certChain, ...CREDENTIAL_KEYS.privateKey, ...CREDENTIAL_KEYS.caCert];

/** Watches a directory of credential folders and serves them by key. */
export class CredentialDirectory {
  readonly #options: CredentialDirectoryOptions;
  readonly #credentials = new Map<string, TlsCredential>();
  readonly #fingerprints = new Map<string, string>();
  readonly #problems = new Map<string, string>();
  readonly #listeners = new Set<(key: string) => void>();
  #timer?: ReturnType<typeof setTimeout>;
  #closed = false;
  #missingReported = false;

  /** A directory watch; nothing is read until `start` or `refresh`. */
  constructor(options: CredentialDirectoryOptions) {
    this.#options = options;
  }

  /** The credential under `key` (`name`, or `namespace/name` when namespaced), if any. */
  get(key: string): TlsCredential | undefined {
    return this.#credentials.get(key);
  }

  /** The keys of every credential held, sorted. */
  keys(): string[] {
    return [...this.#credentials.keys()].sort();
  }

  /** Calls `listener` with the key of every credential added, changed or removed; returns an unsubscribe. */
  onChange(listener: (key: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reads the directory now, then every `checkMs`; resolves after the first read. */
  async start(): Promise<void> {
    await this.refresh();
    this.#schedule();
  }

  /** Stops reading the directory. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  /** Reads the directory once and announces what changed. */
  async refresh(): Promise<void> {
    const folders = await this.#folders();
    if (folders === undefined) return;
    const seen = new Set<string>();
    for (const [key, path] of folders) {
      seen.add(key);
      await this.#load(key, path);
    }
    for (const key of [...this.#credentials.keys()]) {
      if (seen.has(key)) continue;
      this.#credentials.delete(key);
      this.#fingerprints.delete(key);
      this.#options.log.info("credential removed", { key, dir: this.#options.dir });
      this.#announce(key);
    }
    for (const key of [...this.#problems.keys()]) if (!seen.has(key)) this.#problems.delete(key);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(async () => {
      try {
        await this.refresh();
      } finally {
        this.#schedule();
      }
    }, this.#options.checkMs);
  }

  /** The credential folders by key; undefined (and credentials kept) when the directory cannot be listed. */
  async #folders(): Promise<Map<string, string> | undefined> {
    const { dir, layout, setting, log } = this.#options;
    const out = new Map<string, string>();
    let top: string[];
    try {
      top = await subfolders(dir);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        // No directory is no credentials: what a mount that was removed means. Said once, not every check.
        if (!this.#missingReported) log.warn(`${setting}: ${dir} does not exist; no credentials are served`);
        this.#missingReported = true;
        return out;
      }
      this.#report(dir, `${setting}: cannot list ${dir}: ${(error as Error).message}; keeping what was read`);
      return undefined;
    }
    this.#missingReported = false;
    this.#problems.delete(dir);
    for (const first of top) {
      if (layout === "flat") {
        out.set(first, join(dir, first));
        continue;
      }
      try {
        for (const name of await subfolders(join(dir, first))) {
          out.set(`${first}/${name}`, join(dir, first, name));
        }
      } catch (error) {
        // One unreadable namespace folder hides only its own credentials, which stay as last read.
        this.#report(first, `${setting}: cannot list ${join(dir, first)}: ${(error as Error).message}`);
        for (const key of this.#credentials.keys()) {
          if (key.startsWith(`${first}/`)) out.set(key, join(dir, key));
        }
      }
    }
    return out;
  }

  async #load(key: string, path: string): Promise<void> {
    let credential: TlsCredential | undefined;
    try {
      const files = new Map<string, string>();
      for (const name of ALL_KEYS) {
        const text = await readSmallFile(join(path, name));
        if (text !== undefined) files.set(name, text);
      }
      if (files.size === 0) return this.#drop(key);
      credential = tlsCredentialOf((name) => files.get(name));
      if (credential === undefined) {
        throw new SyntaxError(
          `${path}: a credential needs a certificate chain (${
            CREDENTIAL_KEYS.certChain.join(" or ")
          }) and a ` +
            `private key (${CREDENTIAL_KEYS.privateKey.join(" or ")})`,
        );
      }
      checkTlsCredential(credential, path);
    } catch (error) {
      this.#report(
        key,
        `${this.#options.setting}: ${(error as Error).message}; keeping the last good credential`,
      );
      return;
    }
    this.#problems.delete(key);
    const fingerprint = `${credential.certChainPem}\0${credential.privateKeyPem}\0${
      credential.caCertPem ?? ""
    }`;
    if (this.#fingerprints.get(key) === fingerprint) return;
    this.#fingerprints.set(key, fingerprint);
    this.#credentials.set(key, credential);
    this.#options.log.info("credential loaded", { key, path });
    this.#announce(key);
  }

  /** A folder with none of the credential files is not a credential (an unrelated folder): forget it. */
  #drop(key: string): void {
    if (!this.#credentials.delete(key)) return;
    this.#fingerprints.delete(key);
    this.#announce(key);
  }

  #report(key: string, message: string): void {
    if (this.#problems.get(key) === message) return;
    this.#problems.set(key, message);
    this.#options.log.warn(message, { key });
    this.#options.onProblem?.(key, message);
  }

  #announce(key: string): void {
    for (const listener of [...this.#listeners]) listener(key);
  }
}

/** The names of the folders in `dir` (following links, as mounted volumes use them), sorted; dot-names skipped. */
async function subfolders(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith(".")) continue;
    const isDir = entry.isDirectory ||
      (entry.isSymlink && await Deno.stat(join(dir, entry.name)).then((s) => s.isDirectory, () => false));
    if (isDir) out.push(entry.name);
  }
  return out.sort();
}

/**
 * The text of `path`, or undefined when there is no such file.
 *
 * @throws {RangeError} when it is larger than {@link MAX_CREDENTIAL_FILE_BYTES}
 */
async function readSmallFile(path: string): Promise<string | undefined> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  if (!info.isFile) return undefined;
  if (info.size > MAX_CREDENTIAL_FILE_BYTES) {
    throw new RangeError(`${path} is ${info.size} bytes; a certificate or key file is at most 1 MiB`);
  }
  return await Deno.readTextFile(path);
}
