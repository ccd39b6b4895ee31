/** Which key pair to make: RSA of a given modulus size, or ECDSA on P-256. */
export type KeySpec =
  | { readonly algorithm: "RSA"; readonly size?: number }
  | { readonly algorithm: "ECDSA"; readonly curve?: "P-256" };

/** The RSA modulus size used when none is given, as the reference's CA and agent use. */
export const DEFAULT_RSA_KEY_SIZE = 2048;

const MIN_RSA_KEY_SIZE = 2048;
const MAX_RSA_KEY_SIZE = 8192;
const RSA_SIGNATURE = "RSASSA-PKCS1-v1_5";
const KEY_USAGES: KeyUsage[] = ["sign", "verify"];

/**
 * Generates an extractable signing key pair (RSASSA-PKCS1-v1_5 with SHA-256, or ECDSA P-256).
 * Throws RangeError when the RSA size is outside 2048–8192 bits or not a multiple of 8.
 */
export async function generateKeyPair(spec: KeySpec = { algorithm: "RSA" }): Promise<CryptoKeyPair> {
  if (spec.algorithm === "ECDSA") {
    return await crypto.subtle.generateKey(
      { name: "ECDSA", namedCurve: spec.curve ?? "P-256" },
      true,
      KEY_USAGES,
    );
  }
  const size = spec.size ?? DEFAULT_RSA_KEY_SIZE;
  if (!Number.isInteger(size) || size < MIN_RSA_KEY_SIZE || size > MAX_RSA_KEY_SIZE || size % 8 !== 0) {
    throw new RangeError(
      `Invalid RSA key size ${size}: expected a multiple of 8 between ${MIN_RSA_KEY_SIZE} and ${MAX_RSA_KEY_SIZE}`,
    );
  }
  return await crypto.subtle.generateKey(
    {
      name: RSA_SIGNATURE,
      modulusLength: size,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    KEY_USAGES,
  );
}

/** The WebCrypto import parameters for an RSA signing key, as every pki module uses them. */
export const RSA_IMPORT_PARAMS: RsaHashedImportParams = { name: RSA_SIGNATURE, hash: "SHA-256" };

/** The signature algorithm a certificate or CSR signed by `key` uses: SHA-256 (SHA-384 for P-384). */
export function signingAlgorithmFor(key: CryptoKey): RsaHashedImportParams | EcdsaParams {
  const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm & EcKeyAlgorithm>;
  if (algorithm.name === "ECDSA") {
    return { name: "ECDSA", hash: algorithm.namedCurve === "P-384" ? "SHA-384" : "SHA-256" };
  }
  if (algorithm.name === RSA_SIGNATURE) return { name: RSA_SIGNATURE, hash: "SHA-256" };
  throw new TypeError(`Unsupported signing key algorithm "${algorithm.name}": expected RSA or ECDSA`);
}

/** A short description of a key for logs and messages, e.g. `RSA 2048` or `ECDSA P-256`. */
export function describeKey(key: CryptoKey): string {
  const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm & EcKeyAlgorithm>;
  if (algorithm.name === "ECDSA") return `ECDSA ${algorithm.namedCurve}`;
  if (algorithm.name === RSA_SIGNATURE) return `RSA ${algorithm.modulusLength}`;
  return String(algorithm.name);
}
