import { describe } from "../validation/fields.ts";

/** Members each key type needs, as the proxy's JWKS parser requires them. */
const REQUIRED_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  RSA: ["n", "e"],
  EC: ["crv", "x", "y"],
  oct: ["k"],
  OKP: ["crv", "x"],
};

/** Curves each key type accepts. */
const CURVES: Readonly<Record<string, readonly string[]>> = {
  EC: ["P-256", "P-384", "P-521"],
  OKP: ["Ed25519", "Ed448", "X25519", "X448"],
};

/** Base64url (padding and the standard alphabet tolerated, as JWKS parsers do). */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Checks inline JWKS text: a JSON JWK Set (`{"keys": [...]}`) or a single JWK, every key with a supported
 * `kty` and its required members. Returns the number of keys, or a message saying what is wrong.
 */
export function parseInlineJwks(text: string): { keys: number } | { problem: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { problem: `is not valid JSON: ${(err as Error).message}` };
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return { problem: `must be a JSON object (a JWK Set or one JWK), got ${describe(doc)}` };
  }
  const record = doc as Record<string, unknown>;
  if (!("keys" in record)) {
    const problem = checkJwk(record);
    return problem === undefined ? { keys: 1 } : { problem };
  }
  if (!Array.isArray(record.keys)) return { problem: `"keys" must be a list, got ${describe(record.keys)}` };
  for (const [i, key] of record.keys.entries()) {
    const problem = checkJwk(key);
    if (problem !== undefined) return { problem: `keys[${i}]: ${problem}` };
  }
  return { keys: record.keys.length };
}

/** Checks one JWK; returns a message when it cannot be used. */
function checkJwk(key: unknown): string | undefined {
  if (typeof key !== "object" || key === null || Array.isArray(key)) {
    return `a key must be a JSON object, got ${describe(key)}`;
  }
  const jwk = key as Record<string, unknown>;
  if (typeof jwk.kty !== "string") return `"kty" is required, got ${describe(jwk.kty)}`;
  const required = REQUIRED_MEMBERS[jwk.kty];
  if (required === undefined) {
    return `unsupported key type "${jwk.kty}"; expected one of ${Object.keys(REQUIRED_MEMBERS).join(", ")}`;
  }
  for (const member of required) {
    const v = jwk[member];
    if (typeof v !== "string" || v === "") return `${jwk.kty} key needs "${member}", got ${describe(v)}`;
    if (member === "crv") {
      if (!CURVES[jwk.kty].includes(v)) return `unsupported curve "${v}" for ${jwk.kty} key`;
    } else if (!BASE64.test(v)) {
      return `"${member}" of ${jwk.kty} key must be base64url, got "${v}"`;
    }
  }
  return undefined;
}
