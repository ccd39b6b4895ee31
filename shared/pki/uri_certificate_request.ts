/**
 * A PKCS#10 request with an empty subject and URI subject alternative names (a workload's SPIFFE id), built
 * with the minimal DER writer instead of @peculiar/x509, whose module graph a long-running agent would keep
 * resident. RFC 5280: a SAN extension is critical when the subject is empty.
 *
 * @module
 */
import { encodeElement, encodeOid, encodeSequence, TAG } from "./_der.ts";
import { signingAlgorithmFor } from "./key_pair.ts";
import { encodePem } from "./pem.ts";

const OID = {
  extensionRequest: "1.2.840.113549.1.9.14",
  subjectAltName: "2.5.29.17",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  ecdsaWithSha384: "1.2.840.10045.4.3.3",
  sha256WithRsa: "1.2.840.113549.1.1.11",
} as const;

const BOOLEAN = 0x01;
const BIT_STRING = 0x03;
const SET = 0x31;
const ATTRIBUTES = 0xa0;
const URI_NAME = 0x86;

/** A DER INTEGER from unsigned big-endian bytes: leading zeros dropped, a zero added before a high bit. */
function unsignedInteger(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  const contents = trimmed[0] & 0x80 ? Uint8Array.of(0, ...trimmed) : trimmed;
  return encodeElement(TAG.integer, contents);
}

/**
 * Creates a PKCS#10 request signed by `keys` (ECDSA or RSA, as `generateKeyPair` makes them) naming `uris` as
 * subject alternative names; returns it as PEM.
 *
 * @throws {RangeError} for a URI that is not ASCII
 */
export async function createUriCertificateRequest(
  keys: CryptoKeyPair,
  uris: readonly string[],
): Promise<string> {
  for (const uri of uris) {
    if (!/^[\x21-\x7e]+$/.test(uri)) throw new RangeError(`Invalid URI "${uri}": expected printable ASCII`);
  }
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", keys.publicKey));
  const attributes = uris.length === 0 ? new Uint8Array(0) : encodeSequence(
    encodeOid(OID.extensionRequest),
    encodeElement(
      SET,
      encodeSequence(encodeSequence(
        encodeOid(OID.subjectAltName),
        encodeElement(BOOLEAN, Uint8Array.of(0xff)),
        encodeElement(
          TAG.octetString,
          encodeSequence(...uris.map((uri) => encodeElement(URI_NAME, new TextEncoder().encode(uri)))),
        ),
      )),
    ),
  );
  const info = encodeSequence(
    encodeElement(TAG.integer, Uint8Array.of(0)),
    encodeSequence(),
    spki,
    encodeElement(ATTRIBUTES, attributes),
  );
  const algorithm = signingAlgorithmFor(keys.privateKey);
  const raw = new Uint8Array(await crypto.subtle.sign(algorithm, keys.privateKey, info));
  let signatureAlgorithm: Uint8Array;
  let signature: Uint8Array;
  if (algorithm.name === "ECDSA") {
    const sha384 = (algorithm as EcdsaParams).hash === "SHA-384";
    signatureAlgorithm = encodeSequence(encodeOid(sha384 ? OID.ecdsaWithSha384 : OID.ecdsaWithSha256));
    // WebCrypto gives r and s side by side; X.509 wants them as a SEQUENCE of two INTEGERs.
    const half = raw.length / 2;
    signature = encodeSequence(unsignedInteger(raw.subarray(0, half)), unsignedInteger(raw.subarray(half)));
  } else {
    signatureAlgorithm = encodeSequence(
      encodeOid(OID.sha256WithRsa),
      encodeElement(TAG.null, new Uint8Array(0)),
    );
    signature = raw;
  }
  const request = encodeSequence(
    info,
    signatureAlgorithm,
    encodeElement(BIT_STRING, Uint8Array.of(0, ...signature)),
  );
  return encodePem("CERTIFICATE REQUEST", request);
}
