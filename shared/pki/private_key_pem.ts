import {
  decodeOid,
  encodeElement,
  encodeOid,
  encodeSequence,
  readChildren,
  readElement,
  TAG,
} from "./_der.ts";
import { RSA_IMPORT_PARAMS } from "./key_pair.ts";
import { decodePemOf, encodePem } from "./pem.ts";

const OID_RSA_ENCRYPTION = "1.2.840.113549.1.1.1";
const OID_EC_PUBLIC_KEY = "1.2.840.10045.2.1";
const CURVES: Record<string, "P-256" | "P-384"> = {
  "1.2.840.10045.3.1.7": "P-256",
  "1.3.132.0.34": "P-384",
};

/** PEM labels `importPrivateKeyPem` understands: PKCS#8, PKCS#1 (RSA) and SEC1 (EC). */
export const PRIVATE_KEY_LABELS = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"] as const;

/** Encodes a private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). The key must be extractable. */
export async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  if (key.type !== "private") throw new TypeError(`Expected a private key, got a ${key.type} key`);
  return encodePem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", key));
}

/**
 * Encodes a private key in the traditional form: PKCS#1 (`-----BEGIN RSA PRIVATE KEY-----`) for RSA, SEC1
 * with the named curve (`-----BEGIN EC PRIVATE KEY-----`) for ECDSA, as the reference's agent writes keys
 * unless `PKCS8_KEY` is set.
 */
export async function exportTraditionalPrivateKeyPem(key: CryptoKey): Promise<string> {
  if (key.type !== "private") throw new TypeError(`Expected a private key, got a ${key.type} key`);
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", key));
  const what = "the exported private key";
  const [, algorithmId, privateKey] = readChildren(readElement(pkcs8, 0, what).contents, what);
  const [oid, parameters] = readChildren(algorithmId.contents, what);
  if (decodeOid(oid.contents) === OID_RSA_ENCRYPTION) {
    return encodePem("RSA PRIVATE KEY", privateKey.contents);
  }
  // WebCrypto's SEC1 leaves out the optional curve ([0]); standalone, readers need it: insert it after the key.
  const sec1 = readChildren(readElement(privateKey.contents, 0, what).contents, what);
  const hasCurve = sec1.some((child) => child.tag === 0xa0);
  const children = sec1.flatMap((child, i) => {
    const encoded = encodeElement(child.tag, child.contents);
    return i === 1 && !hasCurve
      ? [encoded, encodeElement(0xa0, encodeElement(TAG.oid, parameters.contents))]
      : [
        encoded,
      ];
  });
  return encodePem("EC PRIVATE KEY", encodeSequence(...children));
}

/** Encodes a public key as SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`). */
export async function exportPublicKeyPem(key: CryptoKey): Promise<string> {
  if (key.type !== "public") throw new TypeError(`Expected a public key, got a ${key.type} key`);
  return encodePem("PUBLIC KEY", await crypto.subtle.exportKey("spki", key));
}

/**
 * Imports the first private key of `text` (PKCS#8, or PKCS#1 / SEC1 as older tools write them) as an
 * extractable signing key pair; the public half is derived from the private key.
 * Throws SyntaxError for malformed input and TypeError for key types other than RSA and ECDSA P-256/P-384;
 * `source` (a file or flag) is named in every message.
 */
export async function importPrivateKeyPem(text: string, source = "PEM text"): Promise<CryptoKeyPair> {
  const [block] = decodePemOf(text, PRIVATE_KEY_LABELS, source);
  const pkcs8 = block.label === "RSA PRIVATE KEY"
    ? wrapPkcs1(block.der)
    : block.label === "EC PRIVATE KEY"
    ? wrapSec1(block.der, source)
    : block.der;
  const params = importParams(pkcs8, source);
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, params, true, ["sign"]);
  } catch (error) {
    throw new SyntaxError(`Invalid private key in ${source}: ${(error as Error).message}`, { cause: error });
  }
  return { privateKey, publicKey: await publicKeyOf(privateKey) };
}

/** Derives the public key of an extractable private key (WebCrypto has no direct operation for this). */
export async function publicKeyOf(privateKey: CryptoKey): Promise<CryptoKey> {
  const jwk = await crypto.subtle.exportKey("jwk", privateKey);
  if (jwk.kty === "RSA") {
    return await crypto.subtle.importKey("jwk", { kty: "RSA", n: jwk.n, e: jwk.e }, RSA_IMPORT_PARAMS, true, [
      "verify",
    ]);
  }
  const namedCurve = jwk.crv!;
  return await crypto.subtle.importKey(
    "jwk",
    { kty: "EC", crv: namedCurve, x: jwk.x, y: jwk.y },
    { name: "ECDSA", namedCurve },
    true,
    ["verify"],
  );
}

function importParams(pkcs8: Uint8Array, source: string): RsaHashedImportParams | EcKeyImportParams {
  const what = `private key in ${source}`;
  const outer = readElement(pkcs8, 0, what);
  const [, algorithmId] = readChildren(outer.contents, what);
  if (outer.tag !== TAG.sequence || algorithmId?.tag !== TAG.sequence) {
    throw new SyntaxError(`Invalid ${what}: not a PKCS#8 PrivateKeyInfo`);
  }
  const [oid, parameters] = readChildren(algorithmId.contents, what);
  const algorithm = decodeOid(oid.contents);
  if (algorithm === OID_RSA_ENCRYPTION) return RSA_IMPORT_PARAMS;
  if (algorithm === OID_EC_PUBLIC_KEY) {
    const curveOid = parameters?.tag === TAG.oid ? decodeOid(parameters.contents) : "(none)";
    const namedCurve = CURVES[curveOid];
    if (!namedCurve) {
      throw new TypeError(`Unsupported EC curve "${curveOid}" in ${what}: expected P-256 or P-384`);
    }
    return { name: "ECDSA", namedCurve };
  }
  throw new TypeError(`Unsupported key algorithm "${algorithm}" in ${what}: expected RSA or ECDSA`);
}

function wrapPkcs1(pkcs1: Uint8Array): Uint8Array<ArrayBuffer> {
  return encodeSequence(
    encodeElement(TAG.integer, Uint8Array.of(0)),
    encodeSequence(encodeOid(OID_RSA_ENCRYPTION), encodeElement(TAG.null, new Uint8Array())),
    encodeElement(TAG.octetString, pkcs1),
  );
}

// SEC1 keeps the curve in an optional [0] field; PKCS#8 needs it in the algorithm identifier.
function wrapSec1(sec1: Uint8Array, source: string): Uint8Array<ArrayBuffer> {
  const what = `EC private key in ${source}`;
  const outer = readElement(sec1, 0, what);
  const parameters = readChildren(outer.contents, what).find((child) => child.tag === 0xa0);
  if (!parameters) throw new TypeError(`Unsupported ${what}: the curve is not named`);
  const curve = readElement(parameters.contents, 0, what);
  if (curve.tag !== TAG.oid) throw new TypeError(`Unsupported ${what}: the curve is not a named curve`);
  return encodeSequence(
    encodeElement(TAG.integer, Uint8Array.of(0)),
    encodeSequence(encodeOid(OID_EC_PUBLIC_KEY), encodeElement(TAG.oid, curve.contents)),
    encodeElement(TAG.octetString, sec1),
  );
}
