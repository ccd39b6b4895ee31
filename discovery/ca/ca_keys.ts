/**
 * The key material the certificate authority signs with, and the roots it distributes.
 *
 * With a plugged-in CA (`ROOT_CA_DIR` holding `ca-cert.pem`, `ca-key.pem`, `cert-chain.pem`, `root-cert.pem`)
 * (or, with `USE_REMOTE_CERTS`, the same four keys of the `cacerts` Secret) the CA signs with that intermediate
 * and serves that chain; the files are read once at start. Otherwise it
 * makes a self-signed root and, checked every `CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL`, replaces it when
 * less than `CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE` percent of its life is left. After a
 * rotation the old root stays trusted beside the new one until it expires, so certificates issued under it
 * keep verifying while workloads renew.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  type CertificateAuthority,
  certificatesToPem,
  createSelfSignedCa,
  loadCertificateAuthority,
  parseCertificatesPem,
  type X509Certificate,
} from "@mesh/shared/pki";
import type { Logger } from "@mesh/shared/log/logger";

/** The files of a plugged-in CA, in `ROOT_CA_DIR`. */
export const PLUGGED_CA_FILES = ["ca-cert.pem", "ca-key.pem", "cert-chain.pem", "root-cert.pem"] as const;

/**
 * A plugged-in CA's four files read from elsewhere than `ROOT_CA_DIR` (`USE_REMOTE_CERTS`: the `cacerts` Secret of
 * the cluster the server reads), by file name; `source` names where, for messages.
 */
export interface PluggedCaFiles {
  /** Where the files came from (`Secret "mesh-system/cacerts"`). */
  readonly source: string;
  /** File name (`ca-key.pem`) → text. */
  readonly files: Readonly<Record<string, string>>;
}

/** What the CA signs with now. */
export interface CaKeyMaterial {
  /** The signing certificate and key. */
  readonly signer: CertificateAuthority;
  /** The signer's chain up to and including the root, signer first (PEM, one per entry). */
  readonly chainPem: readonly string[];
  /** Every trusted root (PEM, one per entry), the current one first. */
  readonly rootsPem: readonly string[];
  /** True for a plugged-in CA (never rotated here). */
  readonly plugged: boolean;
}

/** Settings of the key store. */
export interface CaKeyOptions {
  /** `ROOT_CA_DIR`. */
  readonly rootCaDir: string;
  /** The plugged-in CA's files from elsewhere; `ROOT_CA_DIR` must then hold none of them. */
  readonly plugged?: PluggedCaFiles;
  /** Organization of a self-signed root (the trust domain). */
  readonly trustDomain: string;
  /** `CASERVER_SELF_SIGNED_CA_CERT_TTL`, in milliseconds. */
  readonly selfSignedTtlMs: number;
  /** `CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE`. */
  readonly rsaKeySize: number;
  /** `CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE`: rotate when less than this much life is left. */
  readonly gracePercent: number;
  /** The clock. */
  readonly now: () => Date;
  /** Logger of the CA. */
  readonly log: Logger;
}

function pems(certificates: readonly X509Certificate[]): string[] {
  return certificates.map((c) => certificatesToPem([c]));
}

/** The CA's current key material; rotates a self-signed root when it nears its end. */
export class CaKeyStore {
  #current: CaKeyMaterial;
  readonly #options: CaKeyOptions;

  private constructor(current: CaKeyMaterial, options: CaKeyOptions) {
    this.#current = current;
    this.#options = options;
  }

  /**
   * Loads the plugged-in CA when `ROOT_CA_DIR` holds all four files, else creates a self-signed root.
   *
   * @throws {TypeError} naming the file when a plugged-in file is unreadable, or the key does not match
   * @throws {RangeError} when some but not all four files exist
   */
  static async open(options: CaKeyOptions): Promise<CaKeyStore> {
    const inDir = PLUGGED_CA_FILES.filter((f) => existsSync(join(options.rootCaDir, f)));
    const plugged = options.plugged;
    // Two plugged-in CAs would leave it unclear which signs, as the reference refuses a key file beside them.
    if (plugged && inDir.length > 0) {
      throw new RangeError(
        `ROOT_CA_DIR ${options.rootCaDir} holds ${inDir.join(", ")} while the plugged-in CA comes from ` +
          `${plugged.source}: expected one of the two`,
      );
    }
    const present = plugged ? PLUGGED_CA_FILES.filter((f) => plugged.files[f] !== undefined) : inDir;
    const where = plugged ? plugged.source : `ROOT_CA_DIR ${options.rootCaDir}`;
    const named = (f: string) => plugged ? `${plugged.source} key ${f}` : join(options.rootCaDir, f);
    if (present.length === PLUGGED_CA_FILES.length) {
      const read = (f: string) => plugged ? Promise.resolve(plugged.files[f]) : Deno.readTextFile(named(f));
      const [certPem, keyPem, chainText, rootText] = await Promise.all(PLUGGED_CA_FILES.map(read));
      const signer = await loadCertificateAuthority(certPem, keyPem, {
        certificate: named("ca-cert.pem"),
        key: named("ca-key.pem"),
      });
      const chain = parseCertificatesPem(chainText, named("cert-chain.pem"));
      const roots = parseCertificatesPem(rootText, named("root-cert.pem"));
      // cert-chain.pem may or may not start with the signer and end with the root: normalise to both.
      const chainPem = pems(chain);
      if (chainPem[0] !== signer.certificatePem) chainPem.unshift(signer.certificatePem);
      const rootPem = pems(roots);
      if (chainPem.at(-1) !== rootPem[0]) chainPem.push(rootPem[0]);
      options.log.info("CA signs with the plugged-in certificate", {
        from: where,
        subject: signer.certificate.subject,
        notAfter: signer.certificate.notAfter.toISOString(),
      });
      return new CaKeyStore({ signer, chainPem, rootsPem: rootPem, plugged: true }, options);
    }
    if (present.length > 0) {
      throw new RangeError(
        `${where} holds ${present.join(", ")} but not ${
          PLUGGED_CA_FILES.filter((f) => !present.includes(f)).join(", ")
        }: a plugged-in CA needs all four files`,
      );
    }
    const signer = await CaKeyStore.#selfSigned(options);
    options.log.info("CA signs with a self-signed root", {
      notAfter: signer.certificate.notAfter.toISOString(),
    });
    return new CaKeyStore(
      { signer, chainPem: [signer.certificatePem], rootsPem: [signer.certificatePem], plugged: false },
      options,
    );
  }

  static #selfSigned(options: CaKeyOptions): Promise<CertificateAuthority> {
    return createSelfSignedCa({
      org: options.trustDomain,
      ttlMs: options.selfSignedTtlMs,
      keySize: options.rsaKeySize,
      now: options.now(),
    });
  }

  /** The key material in force. */
  get current(): CaKeyMaterial {
    return this.#current;
  }

  /**
   * Rotates a self-signed root with less than the grace percentage of its life left; returns true when it did.
   * The old root stays among the trusted roots until it expires.
   */
  async check(): Promise<boolean> {
    const { signer, plugged } = this.#current;
    if (plugged) return false;
    const now = this.#options.now().getTime();
    const start = signer.certificate.notBefore.getTime();
    const end = signer.certificate.notAfter.getTime();
    const leftPercent = ((end - now) / (end - start)) * 100;
    const stillTrusted = this.#current.rootsPem.filter((pem) =>
      parseCertificatesPem(pem)[0].notAfter.getTime() > now
    );
    if (leftPercent >= this.#options.gracePercent) {
      if (stillTrusted.length !== this.#current.rootsPem.length) {
        this.#current = { ...this.#current, rootsPem: stillTrusted };
      }
      return false;
    }
    const next = await CaKeyStore.#selfSigned(this.#options);
    this.#current = {
      signer: next,
      chainPem: [next.certificatePem],
      rootsPem: [next.certificatePem, ...stillTrusted.filter((pem) => pem !== next.certificatePem)],
      plugged: false,
    };
    this.#options.log.info("CA rotated its self-signed root", {
      leftPercent: Math.round(leftPercent),
      notAfter: next.certificate.notAfter.toISOString(),
    });
    return true;
  }
}
