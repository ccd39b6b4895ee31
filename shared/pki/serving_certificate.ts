import { createSelfSignedCa } from "./certificate_authority.ts";
import { certificatesToPem } from "./certificate_pem.ts";
import { issueCertificate } from "./issue_certificate.ts";
import { generateKeyPair, type KeySpec } from "./key_pair.ts";
import { exportPrivateKeyPem } from "./private_key_pem.ts";
import { splitHostNames } from "./subject_alt_names.ts";

/** A TLS serving certificate with its key, and the CA certificate clients must trust to accept it. */
export interface ServingCertificate {
  /** The leaf certificate as PEM. */
  readonly certPem: string;
  /** The leaf's private key as PKCS#8 PEM. */
  readonly keyPem: string;
  /** The issuing CA certificate as PEM (the trust anchor to hand to clients). */
  readonly caPem: string;
  /** When the leaf certificate expires. */
  readonly notAfter: Date;
}

/** Options of `selfSignedServingCert`. */
export interface ServingCertificateOptions {
  /** Lifetime of the CA and the leaf in milliseconds (default one year). */
  readonly ttlMs?: number;
  /** Organization of the throwaway CA (default `cluster.local`). */
  readonly org?: string;
  /** Key algorithm of both keys (default ECDSA P-256, which is quick to generate at startup). */
  readonly key?: KeySpec;
  /** The issuing time (default: the current time). */
  readonly now?: Date;
}

/** Default lifetime of a self-signed serving certificate: one year. */
export const DEFAULT_SERVING_CERT_TTL_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * Makes a throwaway CA and a server certificate for `names` (DNS names and IP literals, sorted into the right
 * SAN types). The CA's private key is dropped: nothing else can ever be signed by it. Nothing touches disk.
 */
export async function selfSignedServingCert(
  names: readonly string[],
  options: ServingCertificateOptions = {},
): Promise<ServingCertificate> {
  if (names.length === 0) {
    throw new RangeError("Cannot make a serving certificate without a DNS name or IP address");
  }
  const ttlMs = options.ttlMs ?? DEFAULT_SERVING_CERT_TTL_MS;
  const key = options.key ?? { algorithm: "ECDSA" };
  const ca = await createSelfSignedCa({
    org: options.org ?? "cluster.local",
    commonName: "mesh-discovery self-signed serving CA",
    ttlMs,
    keyAlgorithm: key.algorithm,
    keySize: key.algorithm === "RSA" ? key.size : undefined,
    now: options.now,
  });
  const keys = await generateKeyPair(key);
  const leaf = await issueCertificate(ca, {
    ...splitHostNames(names),
    publicKey: keys.publicKey,
    ttlMs,
    usages: ["server"],
    now: options.now,
  });
  return {
    certPem: certificatesToPem([leaf]),
    keyPem: await exportPrivateKeyPem(keys.privateKey),
    caPem: ca.certificatePem,
    notAfter: leaf.notAfter,
  };
}
