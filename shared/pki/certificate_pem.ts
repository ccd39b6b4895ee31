import { x509 } from "./_x509.ts";
import { decodePemOf, encodePem } from "./pem.ts";

/** A parsed X.509 certificate (the @peculiar/x509 class). */
export type X509Certificate = x509.X509Certificate;

/**
 * Parses every `CERTIFICATE` block of `text`, in order (leaf first in a chain file).
 * Throws SyntaxError naming `source` when there is none or one is not a valid certificate.
 */
export function parseCertificatesPem(text: string, source = "certificate"): X509Certificate[] {
  return decodePemOf(text, ["CERTIFICATE"], source).map((block, index) => {
    try {
      return new x509.X509Certificate(block.der);
    } catch (error) {
      throw new SyntaxError(
        `Invalid certificate #${index + 1} in ${source}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  });
}

/** Parses the first certificate of `text`; see `parseCertificatesPem`. */
export function parseCertificatePem(text: string, source = "certificate"): X509Certificate {
  return parseCertificatesPem(text, source)[0];
}

/** Encodes certificates as concatenated PEM blocks, in the given order. */
export function certificatesToPem(certificates: readonly X509Certificate[]): string {
  return certificates.map((certificate) => encodePem("CERTIFICATE", certificate.rawData)).join("");
}

/** True when `publicKey` is the key the certificate certifies (same SubjectPublicKeyInfo). */
export async function certifiesKey(certificate: X509Certificate, publicKey: CryptoKey): Promise<boolean> {
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", publicKey));
  const certified = new Uint8Array(certificate.publicKey.rawData);
  return spki.length === certified.length && spki.every((byte, i) => byte === certified[i]);
}
