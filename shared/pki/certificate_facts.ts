/**
 * What a workload needs to know of a certificate — its validity and the key it certifies — read with the
 * minimal DER reader instead of @peculiar/x509, whose module graph a long-running agent would keep resident.
 *
 * @module
 */
import { encodeElement, readChildren, readElement, TAG } from "./_der.ts";
import { decodePemOf } from "./pem.ts";

/** A certificate's validity, the key it certifies, and its DER. */
export interface CertificateFacts {
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The SubjectPublicKeyInfo, DER. */
  readonly spki: Uint8Array;
  readonly der: Uint8Array;
}

const UTC_TIME = 0x17;
const GENERALIZED_TIME = 0x18;
const EXPLICIT_VERSION = 0xa0;

/** A UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`). */
function readTime(tag: number, contents: Uint8Array, what: string): Date {
  const text = new TextDecoder().decode(contents);
  const match = tag === UTC_TIME
    ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
    : tag === GENERALIZED_TIME
    ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/.exec(text)
    : null;
  if (match === null) throw new SyntaxError(`Invalid time "${text.slice(0, 32)}" in ${what}`);
  const [, y, mo, d, h, mi, s] = match.map(Number);
  const year = tag === UTC_TIME ? (y < 50 ? 2000 + y : 1900 + y) : y;
  return new Date(Date.UTC(year, mo - 1, d, h, mi, s));
}

/**
 * Reads an X.509 certificate's validity and SubjectPublicKeyInfo.
 *
 * @throws {SyntaxError} naming `what` when the DER is not a certificate
 */
export function readCertificateFacts(der: Uint8Array, what: string): CertificateFacts {
  const certificate = readElement(der, 0, what);
  if (certificate.tag !== TAG.sequence || certificate.end !== der.length) {
    throw new SyntaxError(`${what} is not one DER SEQUENCE`);
  }
  const [tbs] = readChildren(certificate.contents, what);
  if (tbs?.tag !== TAG.sequence) throw new SyntaxError(`${what} has no TBSCertificate`);
  const fields = readChildren(tbs.contents, what);
  // version [0] is optional; then serial, signature, issuer, validity, subject, subjectPublicKeyInfo.
  const rest = fields[0]?.tag === EXPLICIT_VERSION ? fields.slice(1) : fields;
  const [serial, , , validity, , spki] = rest;
  if (serial?.tag !== TAG.integer || validity?.tag !== TAG.sequence || spki?.tag !== TAG.sequence) {
    throw new SyntaxError(`${what} does not have a certificate's fields`);
  }
  const [notBefore, notAfter] = readChildren(validity.contents, what);
  if (notBefore === undefined || notAfter === undefined) throw new SyntaxError(`${what} has no validity`);
  return {
    notBefore: readTime(notBefore.tag, notBefore.contents, what),
    notAfter: readTime(notAfter.tag, notAfter.contents, what),
    spki: encodeElement(TAG.sequence, spki.contents),
    der,
  };
}

/**
 * Reads every `CERTIFICATE` block of `text`, in order (leaf first in a chain file).
 *
 * @throws {SyntaxError} naming `source` when there is none or one is not a certificate
 */
export function parseCertificateFactsPem(text: string, source = "certificate"): CertificateFacts[] {
  return decodePemOf(text, ["CERTIFICATE"], source).map((block, index) =>
    readCertificateFacts(block.der, `certificate #${index + 1} in ${source}`)
  );
}

/** True when `publicKey` is the key the certificate certifies (same SubjectPublicKeyInfo). */
export async function certificateCertifiesKey(
  facts: CertificateFacts,
  publicKey: CryptoKey,
): Promise<boolean> {
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", publicKey));
  return spki.length === facts.spki.length && spki.every((byte, i) => byte === facts.spki[i]);
}
