/**
 * Who is calling the CA (and, with `XDS_AUTH`, the secure ADS port): authenticators tried in order, the first
 * success wins. A verified client certificate names its SPIFFE URI SANs; a bearer JWT in the `authorization`
 * metadata names the service account it was issued to, once its audience and (with `TOKEN_ISSUER`) its
 * signature check out. The orchestrator's token review (`token_review_authenticator.ts`) is another.
 *
 * @module
 */
import * as jose from "jose";
import { parseSpiffeUri, spiffeId, subjectAltNamesOf } from "@mesh/shared/pki";
import { x509 } from "@mesh/shared/pki/_x509";

/** Decodes bytes one char per byte (WHATWG's windows-1252 maps each of the 256 bytes to its own char). */
const BYTE_CHARS = new TextDecoder("latin1");

/** What an authenticator sees of a call. */
export interface CallerCredentials {
  /** The verified client certificate (DER), when the connection is TLS and the peer presented one. */
  readonly peerCertificateDer?: Uint8Array;
  /** The verified chain of that certificate, leaf first, trust anchor last, when the transport gives it. */
  readonly peerCertificateChainDer?: readonly Uint8Array[];
  /** The `authorization` metadata values. */
  readonly authorization: readonly string[];
  /** The caller's IP address, the key of per-caller budgets; absent on a Unix socket or when unknown. */
  readonly peerAddress?: string;
}

/** The caller could not be authenticated; the message says why without repeating secrets. */
export class AuthenticationError extends Error {
  /** True when a credential verified but named no usable identity (`ca_server_id_extraction_err_count`). */
  readonly identityMissing: boolean;
  constructor(message: string, options?: ErrorOptions & { identityMissing?: boolean }) {
    super(message, options);
    this.name = "AuthenticationError";
    this.identityMissing = options?.identityMissing ?? false;
  }
}

/** One way to authenticate a caller. */
export interface CallerAuthenticator {
  /** Names the method in errors (`client certificate`, `JWT`). */
  readonly name: string;
  /**
   * The caller's SPIFFE identities; undefined when the call carries no credential of this kind.
   *
   * @throws {AuthenticationError} when it carries one that does not hold
   */
  authenticate(call: CallerCredentials): Promise<string[] | undefined>;
}

/** Federated trust domains whose roots the secure port also trusts (`SPIFFE_BUNDLE_ENDPOINTS`). */
export interface FederatedTrust {
  /** The federated trust domain whose bundle holds this trust anchor, if any. */
  trustDomainOfAnchor(anchorDer: Uint8Array): string | undefined;
  /** Every federated trust domain with a loaded bundle. */
  trustDomains(): readonly string[];
}

/**
 * Authenticates by the SPIFFE URI SANs of the verified client certificate. With federation, a root vouches only
 * for its own trust domain: a certificate verified against a federated bundle names identities of that domain
 * alone, and one verified against the mesh's roots names none of a federated domain.
 */
export class ClientCertAuthenticator implements CallerAuthenticator {
  readonly name = "client certificate";
  readonly #memoSize: number;
  /**
   * The SPIFFE URIs of the certificates seen last, by DER (as one char per byte), least recently used first. A
   * workload presents the same certificate on every call, and parsing it costs more event-loop time than the
   * rest of a refused call, so a caller flooding the CA or the secure port pays for it once.
   */
  readonly #urisByDer = new Map<string, readonly string[]>();

  /** `memoSize`: certificates whose SPIFFE URIs are remembered (default 1024). */
  constructor(readonly federation?: FederatedTrust, memoSize = 1024) {
    this.#memoSize = memoSize;
  }

  /** Certificates whose URIs are remembered. */
  get remembered(): number {
    return this.#urisByDer.size;
  }

  authenticate(call: CallerCredentials): Promise<string[] | undefined> {
    if (call.peerCertificateDer === undefined) return Promise.resolve(undefined);
    let ids = [...this.#spiffeUris(call.peerCertificateDer)];
    if (ids.length === 0) {
      return Promise.reject(
        new AuthenticationError("the client certificate has no SPIFFE URI SAN", { identityMissing: true }),
      );
    }
    if (this.federation !== undefined) {
      const anchor = call.peerCertificateChainDer?.at(-1);
      const vouching = anchor === undefined ? undefined : this.federation.trustDomainOfAnchor(anchor);
      const federated = new Set(this.federation.trustDomains());
      const domainOf = (id: string) => {
        try {
          return parseSpiffeUri(id).trustDomain;
        } catch {
          return "";
        }
      };
      ids = ids.filter((id) =>
        vouching !== undefined ? domainOf(id) === vouching : !federated.has(domainOf(id))
      );
      if (ids.length === 0) {
        return Promise.reject(
          new AuthenticationError(
            vouching !== undefined
              ? `the client certificate chains to the bundle of trust domain "${vouching}" but names no identity of it`
              : "the client certificate chains to the mesh's roots but names only identities of federated trust domains",
          ),
        );
      }
    }
    return Promise.resolve(ids);
  }

  #spiffeUris(der: Uint8Array): readonly string[] {
    const key = BYTE_CHARS.decode(der);
    let uris = this.#urisByDer.get(key);
    if (uris === undefined) {
      const certificate = new x509.X509Certificate(new Uint8Array(der).buffer);
      uris = Object.freeze(subjectAltNamesOf(certificate).uris.filter((uri) => uri.startsWith("spiffe://")));
    } else {
      this.#urisByDer.delete(key);
    }
    this.#urisByDer.set(key, uris);
    if (this.#urisByDer.size > this.#memoSize) this.#urisByDer.delete(this.#urisByDer.keys().next().value!);
    return uris;
  }
}

/** Settings of JWT authentication. */
export interface JwtAuthenticatorOptions {
  /** `TOKEN_AUDIENCES` and `AUDIENCE`: a token must name one of them. */
  readonly audiences: readonly string[];
  /** `REQUIRE_3P_TOKEN`: reject tokens without an audience. */
  readonly requireAudience: boolean;
  /** `TOKEN_ISSUER`: the OIDC issuer whose keys sign tokens; empty: JWTs cannot be verified and are refused. */
  readonly issuer: string;
  /** The trust domain of the identities tokens map to. */
  readonly trustDomain: string;
  /** Fetches JSON (the OIDC discovery document); a fake in tests. */
  readonly fetchJson?: (url: string) => Promise<unknown>;
}

/** The service account a token names: Kubernetes-style claims, or `sub` as `system:serviceaccount:<ns>:<sa>`. */
function serviceAccountOf(claims: jose.JWTPayload): { namespace: string; name: string } | undefined {
  const k8s = claims["kubernetes.io"] as
    | { namespace?: string; serviceaccount?: { name?: string } }
    | undefined;
  if (k8s?.namespace && k8s.serviceaccount?.name) {
    return { namespace: k8s.namespace, name: k8s.serviceaccount.name };
  }
  const match = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(claims.sub ?? "");
  return match ? { namespace: match[1], name: match[2] } : undefined;
}

/** Authenticates bearer JWTs against the issuer's JWKS (fetched through OIDC discovery, cached, refetched on a new key). */
export class JwtAuthenticator implements CallerAuthenticator {
  readonly name = "JWT";
  readonly #options: JwtAuthenticatorOptions;
  #keys?: Promise<ReturnType<typeof jose.createRemoteJWKSet>>;

  constructor(options: JwtAuthenticatorOptions) {
    this.#options = options;
  }

  async authenticate(call: CallerCredentials): Promise<string[] | undefined> {
    const header = call.authorization.find((v) => /^bearer /i.test(v));
    if (header === undefined) return undefined;
    const token = header.slice("bearer ".length).trim();
    if (this.#options.issuer === "") {
      throw new AuthenticationError(
        "bearer tokens are not accepted: TOKEN_ISSUER is not set, so none can be verified",
      );
    }
    let claims: jose.JWTPayload;
    try {
      ({ payload: claims } = await jose.jwtVerify(token, await this.#jwks(), {
        issuer: this.#options.issuer,
      }));
    } catch (cause) {
      throw new AuthenticationError(
        `the bearer token does not verify against ${this.#options.issuer}: ${(cause as Error).message}`,
        { cause },
      );
    }
    const audiences = claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (audiences.length === 0) {
      if (this.#options.requireAudience) {
        throw new AuthenticationError("the bearer token has no audience and REQUIRE_3P_TOKEN is set");
      }
    } else if (!audiences.some((a) => this.#options.audiences.includes(a))) {
      throw new AuthenticationError(
        `the bearer token's audience is none of TOKEN_AUDIENCES and AUDIENCE (${
          this.#options.audiences.join(", ")
        })`,
      );
    }
    const account = serviceAccountOf(claims);
    if (account === undefined) {
      throw new AuthenticationError(
        "the bearer token names no service account (kubernetes.io claims or sub)",
      );
    }
    return [spiffeId(this.#options.trustDomain, account.namespace, account.name)];
  }

  #jwks(): Promise<ReturnType<typeof jose.createRemoteJWKSet>> {
    this.#keys ??= (async () => {
      const fetchJson = this.#options.fetchJson ?? (async (url: string) => (await fetch(url)).json());
      const discovery = await fetchJson(
        `${this.#options.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`,
      ) as { jwks_uri?: string };
      if (typeof discovery?.jwks_uri !== "string") {
        throw new AuthenticationError(`the issuer ${this.#options.issuer} publishes no jwks_uri`);
      }
      return jose.createRemoteJWKSet(new URL(discovery.jwks_uri));
    })();
    // A failed discovery is retried on the next call rather than cached.
    this.#keys.catch(() => this.#keys = undefined);
    return this.#keys;
  }
}

/**
 * Runs the authenticators in order: the first that finds its kind of credential decides. No credential at all,
 * or every failure, is an AuthenticationError naming what was tried.
 */
export async function authenticateCaller(
  authenticators: readonly CallerAuthenticator[],
  call: CallerCredentials,
): Promise<string[]> {
  const failures: string[] = [];
  let identityMissing = false;
  for (const authenticator of authenticators) {
    try {
      const ids = await authenticator.authenticate(call);
      if (ids !== undefined) return ids;
    } catch (error) {
      failures.push(`${authenticator.name}: ${(error as Error).message}`);
      if (error instanceof AuthenticationError && error.identityMissing) identityMissing = true;
    }
  }
  throw new AuthenticationError(
    failures.length === 0
      ? `no credential: expected one of ${authenticators.map((a) => a.name).join(", ")}`
      : failures.join("; "),
    { identityMissing },
  );
}

/** The namespace and service account of a SPIFFE identity, when it has that form. */
export function identityParts(
  id: string,
): { trustDomain: string; namespace?: string; serviceAccount?: string } {
  const { trustDomain, segments } = parseSpiffeUri(id);
  return segments[0] === "ns" && segments[2] === "sa"
    ? { trustDomain, namespace: segments[1], serviceAccount: segments[3] }
    : { trustDomain };
}
