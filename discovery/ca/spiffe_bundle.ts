/**
 * SPIFFE federation input: the `SPIFFE_BUNDLE_ENDPOINTS` setting (which trust domain's bundle is served where)
 * and the bundle documents those endpoints serve (a JWK set whose `x509-svid` keys carry the trust domain's
 * X.509 authorities in `x5c`), per the SPIFFE Trust Domain and Bundle specification.
 *
 * @module
 */
import { certificatesToPem } from "@mesh/shared/pki";
import { x509 } from "@mesh/shared/pki/_x509";

/** One trust domain and the HTTPS URL of its bundle endpoint. */
export interface BundleEndpoint {
  readonly trustDomain: string;
  readonly url: string;
}

/** A trust domain name: lowercase letters, digits, `.`, `-` and `_` (SPIFFE ID specification). */
const TRUST_DOMAIN = /^[a-z0-9._-]+$/;

/**
 * Parses `<trust_domain>|<endpoint_url>` tuples joined with `||`. Empty means no federation.
 *
 * @throws {RangeError} naming the variable, the tuple and what is expected
 */
export function parseBundleEndpoints(value: string, name = "SPIFFE_BUNDLE_ENDPOINTS"): BundleEndpoint[] {
  if (value.trim() === "") return [];
  const seen = new Set<string>();
  return value.split("||").map((tuple) => {
    const parts = tuple.trim().split("|");
    const expected = "expected <trust_domain>|<https URL> tuples joined with ||";
    if (parts.length !== 2) throw new RangeError(`Invalid ${name} entry "${tuple}": ${expected}`);
    const [trustDomain, url] = parts.map((p) => p.trim());
    if (!TRUST_DOMAIN.test(trustDomain)) {
      throw new RangeError(
        `Invalid ${name} trust domain "${trustDomain}": expected lowercase letters, digits, ".", "-" or "_"`,
      );
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new RangeError(`Invalid ${name} URL "${url}" for ${trustDomain}: ${expected}`);
    }
    if (parsed.protocol !== "https:") {
      throw new RangeError(
        `Invalid ${name} URL "${url}" for ${trustDomain}: a bundle endpoint must be https`,
      );
    }
    if (seen.has(trustDomain)) {
      throw new RangeError(`Invalid ${name}: trust domain "${trustDomain}" given twice`);
    }
    seen.add(trustDomain);
    return { trustDomain, url: parsed.href };
  });
}

/** What a bundle document says about its trust domain. */
export interface SpiffeBundle {
  /** The X.509 authorities, PEM, one certificate each. */
  readonly x509AuthoritiesPem: readonly string[];
  /** `spiffe_refresh_hint`, seconds, when given. */
  readonly refreshHintSeconds?: number;
  /** `spiffe_sequence`, when given. */
  readonly sequence?: number;
}

interface Jwk {
  readonly use?: unknown;
  readonly x5c?: unknown;
}

/**
 * Reads a bundle document. Keys other than `x509-svid` (e.g. `jwt-svid`) are skipped; an `x509-svid` key must
 * carry exactly one certificate.
 *
 * @throws {SyntaxError} naming `source` and the field when the document is not a bundle
 */
export function parseSpiffeBundle(text: string, source: string): SpiffeBundle {
  let doc: { keys?: unknown; spiffe_refresh_hint?: unknown; spiffe_sequence?: unknown };
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(`${source}: not JSON: ${(error as Error).message}`);
  }
  if (typeof doc !== "object" || doc === null || !Array.isArray(doc.keys)) {
    throw new SyntaxError(`${source}: expected a JWK set with a "keys" array`);
  }
  const authorities: string[] = [];
  (doc.keys as Jwk[]).forEach((key, i) => {
    if (key?.use !== "x509-svid") return;
    if (!Array.isArray(key.x5c) || key.x5c.length !== 1 || typeof key.x5c[0] !== "string") {
      throw new SyntaxError(`${source}: keys[${i}].x5c: an x509-svid key must hold exactly one certificate`);
    }
    let certificate: x509.X509Certificate;
    try {
      const der = Uint8Array.from(atob(key.x5c[0]), (c) => c.charCodeAt(0));
      certificate = new x509.X509Certificate(der.buffer);
    } catch (error) {
      throw new SyntaxError(
        `${source}: keys[${i}].x5c[0]: not a base64 DER certificate: ${(error as Error).message}`,
      );
    }
    authorities.push(certificatesToPem([certificate]));
  });
  if (authorities.length === 0) throw new SyntaxError(`${source}: the bundle has no x509-svid authority`);
  const hint = doc.spiffe_refresh_hint;
  const sequence = doc.spiffe_sequence;
  return {
    x509AuthoritiesPem: authorities,
    ...(typeof hint === "number" && Number.isFinite(hint) && hint > 0 ? { refreshHintSeconds: hint } : {}),
    ...(typeof sequence === "number" ? { sequence } : {}),
  };
}
