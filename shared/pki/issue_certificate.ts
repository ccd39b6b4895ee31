import { x509 } from "./_x509.ts";
import { randomSerialNumber, subjectName, validityPeriod } from "./_certificate_fields.ts";
import type { CertificateAuthority } from "./certificate_authority.ts";
import type { X509Certificate } from "./certificate_pem.ts";
import {
  type CertificateRequest,
  parseCertificateRequestPem,
  verifyCertificateRequest,
} from "./certificate_request.ts";
import { signingAlgorithmFor } from "./key_pair.ts";
import { subjectAltNameExtension, type SubjectAltNames } from "./subject_alt_names.ts";

/** What a leaf certificate certifies and for how long. Give exactly one of `publicKey` and `csr`. */
export interface IssueCertificateOptions extends Partial<SubjectAltNames> {
  /** Lifetime in milliseconds; the certificate never outlives its issuer (it is cut at the CA's notAfter). */
  readonly ttlMs: number;
  /** The subject's public key: a CryptoKey or SubjectPublicKeyInfo PEM. */
  readonly publicKey?: CryptoKey | string;
  /**
   * A PKCS#10 request (PEM or parsed). Its signature is checked and only its public key is used: names come from
   * these options, which the caller derives from an authenticated identity, never from the request.
   */
  readonly csr?: string | CertificateRequest;
  /** Subject common name (`CN`); absent or empty leaves it out. */
  readonly commonName?: string;
  /** Subject organization (`O`); absent or empty leaves it out. */
  readonly org?: string;
  /** Extended key usages (default both, as mesh workloads are TLS servers and clients). */
  readonly usages?: readonly ("server" | "client")[];
  /** The issuing time (default: the current time). */
  readonly now?: Date;
}

/**
 * Issues a leaf certificate signed by `ca`: keyUsage digitalSignature (+ keyEncipherment for RSA), the requested
 * extended key usages, SANs (critical when the subject is empty, as RFC 5280 requires), subject and authority key
 * identifiers. Throws RangeError for a bad TTL, a bad name or no name at all, and TypeError for bad key input.
 */
export async function issueCertificate(
  ca: CertificateAuthority,
  options: IssueCertificateOptions,
): Promise<X509Certificate> {
  const publicKey = await subjectPublicKey(options);
  const now = options.now ?? new Date();
  const validity = validityPeriod(now, options.ttlMs, "the issued certificate");
  if (validity.notAfter > ca.certificate.notAfter) validity.notAfter = ca.certificate.notAfter;
  if (validity.notAfter <= now) {
    throw new RangeError(
      `Cannot issue a certificate: the CA expired at ${ca.certificate.notAfter.toISOString()}`,
    );
  }
  const subject = subjectName(options.org, options.commonName);
  const san = subjectAltNameExtension(options, subject.length === 0);
  if (!san && subject.length === 0) {
    throw new RangeError(
      "Cannot issue a certificate without a name: give DNS names, IP addresses, URIs or a subject",
    );
  }
  const isRsa = publicKey.algorithm.name !== "ECDSA";
  const usages = options.usages ?? ["server", "client"];
  const caKeyId = ca.certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | (isRsa ? x509.KeyUsageFlags.keyEncipherment : 0),
      true,
    ),
    new x509.ExtendedKeyUsageExtension(
      usages.map((u) => u === "server" ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth),
    ),
    await x509.SubjectKeyIdentifierExtension.create(publicKey),
    caKeyId
      ? new x509.AuthorityKeyIdentifierExtension(caKeyId)
      : await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
  ];
  if (san) extensions.push(san);
  return await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject,
    issuer: ca.certificate.subjectName,
    ...validity,
    publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: signingAlgorithmFor(ca.keys.privateKey),
    extensions,
  });
}

async function subjectPublicKey(options: IssueCertificateOptions): Promise<CryptoKey> {
  if ((options.publicKey === undefined) === (options.csr === undefined)) {
    throw new TypeError("Cannot issue a certificate: give exactly one of publicKey and csr");
  }
  if (options.publicKey instanceof CryptoKey) {
    if (options.publicKey.type !== "public") {
      throw new TypeError(`Expected a public key to certify, got a ${options.publicKey.type} key`);
    }
    return options.publicKey;
  }
  let key: x509.PublicKey;
  if (typeof options.publicKey === "string") {
    try {
      key = new x509.PublicKey(options.publicKey);
    } catch (error) {
      throw new TypeError(`Invalid public key PEM: ${(error as Error).message}`, { cause: error });
    }
  } else {
    const csr = typeof options.csr === "string"
      ? await parseCertificateRequestPem(options.csr)
      : await verifyCertificateRequest(options.csr!);
    key = csr.publicKey;
  }
  try {
    return await key.export();
  } catch (error) {
    throw new TypeError(`Unsupported public key: ${(error as Error).message}; expected RSA or ECDSA`, {
      cause: error,
    });
  }
}
