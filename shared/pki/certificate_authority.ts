import { x509 } from "./_x509.ts";
import { randomSerialNumber, subjectName, validityPeriod } from "./_certificate_fields.ts";
import {
  certificatesToPem,
  certifiesKey,
  parseCertificatePem,
  type X509Certificate,
} from "./certificate_pem.ts";
import { generateKeyPair, signingAlgorithmFor } from "./key_pair.ts";
import { importPrivateKeyPem } from "./private_key_pem.ts";

/** A certificate authority: its certificate and the key pair it signs with. */
export interface CertificateAuthority {
  /** The CA's certificate; its subject becomes the issuer of what the CA signs. */
  readonly certificate: X509Certificate;
  /** The key pair the CA signs with; its public key is the certificate's. */
  readonly keys: CryptoKeyPair;
  /** The CA certificate as PEM, for trust bundles (`root-cert.pem`, `caCerts` of a client). */
  readonly certificatePem: string;
}

/** Options of `createSelfSignedCa`. */
export interface SelfSignedCaOptions {
  /** Subject organization; the reference uses the trust domain (`cluster.local`). */
  readonly org: string;
  /** Lifetime in milliseconds. */
  readonly ttlMs: number;
  /** RSA modulus size in bits (default 2048); ignored for ECDSA. */
  readonly keySize?: number;
  /** Key algorithm (default RSA). */
  readonly keyAlgorithm?: "RSA" | "ECDSA";
  /** Optional subject common name. */
  readonly commonName?: string;
  /** The issuing time (default: the current time). */
  readonly now?: Date;
}

/**
 * Creates a self-signed root CA: a fresh key pair and a certificate with `basicConstraints` CA (critical),
 * `keyUsage` keyCertSign and cRLSign (critical), and a subject key identifier for chain building.
 */
export async function createSelfSignedCa(options: SelfSignedCaOptions): Promise<CertificateAuthority> {
  if (!options.org) throw new RangeError('Invalid CA organization "": expected a non-empty name');
  const validity = validityPeriod(options.now ?? new Date(), options.ttlMs, "the self-signed CA");
  const keys = await generateKeyPair(
    options.keyAlgorithm === "ECDSA" ? { algorithm: "ECDSA" } : { algorithm: "RSA", size: options.keySize },
  );
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: subjectName(options.org, options.commonName),
    ...validity,
    keys,
    signingAlgorithm: signingAlgorithmFor(keys.privateKey),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate, keys, certificatePem: certificatesToPem([certificate]) };
}

/**
 * Loads an existing CA from PEM text (e.g. plugged-in `ca-cert.pem` and `ca-key.pem`). Throws naming the sources
 * when the certificate is not a CA or the key is not the one it certifies.
 */
export async function loadCertificateAuthority(
  certificatePem: string,
  keyPem: string,
  sources: { certificate: string; key: string } = { certificate: "CA certificate", key: "CA key" },
): Promise<CertificateAuthority> {
  const certificate = parseCertificatePem(certificatePem, sources.certificate);
  const constraints = certificate.getExtension(x509.BasicConstraintsExtension);
  if (!constraints?.ca) {
    throw new TypeError(`Certificate in ${sources.certificate} is not a CA: basicConstraints CA is not set`);
  }
  const keys = await importPrivateKeyPem(keyPem, sources.key);
  if (!await certifiesKey(certificate, keys.publicKey)) {
    throw new TypeError(`Key in ${sources.key} does not match the certificate in ${sources.certificate}`);
  }
  return { certificate, keys, certificatePem: certificatesToPem([certificate]) };
}
