/** The URI scheme prefix of every SPIFFE id. */
export const SPIFFE_PREFIX = "spiffe://";

/** A workload identity in the mesh's form `spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>`. */
export interface SpiffeIdentity {
  /** Trust domain, the host part of the id. */
  readonly trustDomain: string;
  /** Namespace of the workload, after `/ns/`. */
  readonly namespace: string;
  /** Service account of the workload, after `/sa/`. */
  readonly serviceAccount: string;
}

/** A SPIFFE id or trust domain was malformed; the message says which part and what is expected. */
export class SpiffeIdError extends Error {
  /** `options.cause` holds the underlying error, when there is one. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SpiffeIdError";
  }
}

const MAX_ID_LENGTH = 2048;
const MAX_TRUST_DOMAIN_LENGTH = 255;
const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
const PATH_SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Checks a trust domain as the SPIFFE spec defines it (lower-case letters, digits, `.`, `-`, `_`). */
export function validateTrustDomain(trustDomain: string): void {
  if (trustDomain === "") throw new SpiffeIdError('Invalid trust domain "": must not be empty');
  if (trustDomain.length > MAX_TRUST_DOMAIN_LENGTH) {
    throw new SpiffeIdError(
      `Invalid trust domain "${trustDomain}": longer than ${MAX_TRUST_DOMAIN_LENGTH} characters`,
    );
  }
  if (!TRUST_DOMAIN.test(trustDomain)) {
    throw new SpiffeIdError(
      `Invalid trust domain "${trustDomain}": only lower-case letters, digits, ".", "-" and "_" are allowed`,
    );
  }
}

/** Builds `spiffe://<trustDomain>/ns/<namespace>/sa/<serviceAccount>`; throws SpiffeIdError on a bad part. */
export function spiffeId(trustDomain: string, namespace: string, serviceAccount: string): string {
  validateTrustDomain(trustDomain);
  checkSegment(namespace, "namespace");
  checkSegment(serviceAccount, "service account");
  return `${SPIFFE_PREFIX}${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/**
 * Splits any SPIFFE id into trust domain and path segments, checking the SPIFFE spec's rules (scheme, trust domain
 * characters, non-empty segments other than `.` and `..`, no query or fragment). Throws SpiffeIdError.
 */
export function parseSpiffeUri(id: string): { trustDomain: string; segments: string[] } {
  if (!id.startsWith(SPIFFE_PREFIX)) {
    throw new SpiffeIdError(`Invalid SPIFFE id "${id}": expected it to start with "${SPIFFE_PREFIX}"`);
  }
  if (id.length > MAX_ID_LENGTH) {
    throw new SpiffeIdError(`Invalid SPIFFE id "${id.slice(0, 64)}…": longer than ${MAX_ID_LENGTH} bytes`);
  }
  const rest = id.slice(SPIFFE_PREFIX.length);
  const slash = rest.indexOf("/");
  const trustDomain = slash === -1 ? rest : rest.slice(0, slash);
  try {
    validateTrustDomain(trustDomain);
  } catch (error) {
    throw new SpiffeIdError(`Invalid SPIFFE id "${id}": ${(error as Error).message}`, { cause: error });
  }
  if (slash === -1) return { trustDomain, segments: [] };
  const segments = rest.slice(slash + 1).split("/");
  for (const [index, segment] of segments.entries()) {
    if (segment === "" || segment === "." || segment === ".." || !PATH_SEGMENT.test(segment)) {
      throw new SpiffeIdError(
        `Invalid SPIFFE id "${id}": path segment ${
          index + 1
        } "${segment}" must be non-empty, not "." or "..", ` +
          `and use only letters, digits, ".", "-" and "_"`,
      );
    }
  }
  return { trustDomain, segments };
}

/** Parses a mesh workload id `spiffe://<td>/ns/<ns>/sa/<sa>`; throws SpiffeIdError for any other shape. */
export function parseSpiffeId(id: string): SpiffeIdentity {
  const { trustDomain, segments } = parseSpiffeUri(id);
  if (segments.length !== 4 || segments[0] !== "ns" || segments[2] !== "sa") {
    throw new SpiffeIdError(
      `Invalid workload SPIFFE id "${id}": expected "spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>"`,
    );
  }
  return { trustDomain, namespace: segments[1], serviceAccount: segments[3] };
}

function checkSegment(value: string, what: string): void {
  if (value === "" || value === "." || value === ".." || !PATH_SEGMENT.test(value)) {
    throw new SpiffeIdError(
      `Invalid ${what} "${value}" for a SPIFFE id: expected a non-empty name of letters, digits, ".", "-" and "_"`,
    );
  }
}
