import { x509 } from "./_x509.ts";
import { subjectName } from "./_certificate_fields.ts";
import { signingAlgorithmFor } from "./key_pair.ts";
import { decodePemOf } from "./pem.ts";
import { subjectAltNameExtension, type SubjectAltNames } from "./subject_alt_names.ts";

/** A parsed PKCS#10 certificate signing request (the @peculiar/x509 class). */
export type CertificateRequest = x509.Pkcs10CertificateRequest;

/** What a certificate signing request asks for. */
export interface CertificateRequestOptions extends Partial<SubjectAltNames> {
  /** Subject common name (`CN`); absent or empty leaves it out. */
  readonly commonName?: string;
  /** Subject organization (`O`); absent or empty leaves it out. */
  readonly org?: string;
}

/** Creates a PKCS#10 request signed by `keys`, with the given names; returns it as PEM. */
export async function createCertificateRequest(
  keys: CryptoKeyPair,
  options: CertificateRequestOptions,
): Promise<string> {
  const name = subjectName(options.org, options.commonName);
  const san = subjectAltNameExtension(options, name.length === 0);
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: signingAlgorithmFor(keys.privateKey),
    extensions: san ? [san] : [],
  });
  return request.toString("pem") + "\n";
}

/**
 * Parses the first `CERTIFICATE REQUEST` block of `text` and checks its self-signature, which proves the
 * requester holds the private key. Throws SyntaxError naming `source` when it is malformed or does not verify.
 */
export async function parseCertificateRequestPem(
  text: string,
  source = "certificate request",
): Promise<CertificateRequest> {
  const [block] = decodePemOf(text, ["CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST"], source);
  let request: CertificateRequest;
  try {
    request = new x509.Pkcs10CertificateRequest(block.der);
  } catch (error) {
    throw new SyntaxError(`Invalid certificate request in ${source}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return await verifyCertificateRequest(request, source);
}

/** Checks the request's self-signature, which proves the requester holds the private key; returns the request. */
export async function verifyCertificateRequest(
  request: CertificateRequest,
  source = "certificate request",
): Promise<CertificateRequest> {
  let verified: boolean;
  try {
    verified = await request.verify();
  } catch (error) {
    throw new SyntaxError(`Cannot verify the certificate request in ${source}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!verified) {
    throw new SyntaxError(
      `Certificate request in ${source} has an invalid signature: it was altered or mis-signed`,
    );
  }
  return request;
}
