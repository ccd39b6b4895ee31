/**
 * The certificate authority of `mesh-discovery`: key material (plugged-in or self-signed, rotated on its own
 * clock), the caller authenticators (built once: the signing service and the secure port's `XDS_AUTH` share
 * their OIDC discovery and JWKS cache), the signing service, the serving certificate of the secure ports, the
 * expiry metrics and the trusted roots for the debug interface. Created once by the composition root.
 *
 * @module
 */
import type { JwtPolicy } from "@mesh/shared/credentials/jwt_policy";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { GrpcService } from "@mesh/shared/grpc";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { KeyedRateLimiter } from "@mesh/shared/time/keyed_rate_limiter";
import {
  certificatesToPem,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
  parseCertificatesPem,
} from "@mesh/shared/pki";
import {
  type CallerAuthenticator,
  ClientCertAuthenticator,
  type FederatedTrust,
  JwtAuthenticator,
} from "./caller_authenticator.ts";
import { type ReviewToken, TokenReviewAuthenticator } from "./token_review_authenticator.ts";
import { CaKeyStore, type PluggedCaFiles } from "./ca_keys.ts";
import { CaService, type CsrLimits } from "./ca_service.ts";
import type { ExternalSigner } from "../model/external_signer.ts";
import type { SigningPolicy } from "./ca_signer.ts";

/** Settings of the CA, from the environment and flags. */
export interface CaSettings {
  /** `ROOT_CA_DIR`. */
  readonly rootCaDir: string;
  /** `--trust-domain`. */
  readonly trustDomain: string;
  /** `CASERVER_SELF_SIGNED_CA_CERT_TTL` (ms). */
  readonly selfSignedTtlMs: number;
  /** `CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE`. */
  readonly rsaKeySize: number;
  /** `CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL` (ms). */
  readonly checkIntervalMs: number;
  /** `CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR`. */
  readonly jitter: boolean;
  /** `CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE`. */
  readonly gracePercent: number;
  /** `DEFAULT_WORKLOAD_CERT_TTL` and `MAX_WORKLOAD_CERT_TTL` (ms). */
  readonly policy: SigningPolicy;
  /** `CASERVER_CSR_MAX_BYTES`, `CASERVER_CSR_RATE_LIMIT_*` and the signing queue's `CASERVER_*` bounds. */
  readonly csrLimits: CsrLimits;
  /** `TOKEN_AUDIENCES`. */
  readonly audiences: readonly string[];
  /** `REQUIRE_3P_TOKEN`. */
  readonly requireAudience: boolean;
  /** `TOKEN_ISSUER`. */
  readonly issuer: string;
  /** `JWT_POLICY`: how orchestrator tokens are reviewed. */
  readonly jwtPolicy: JwtPolicy;
}

/** What the CA needs besides its settings. */
export interface CaDeps {
  readonly log: Logger;
  readonly metrics?: Metrics;
  /** The clock (a fake in tests). */
  readonly now?: () => Date;
  /** Monotonic milliseconds for the CSR rate limits and the token reviews' budgets (default `performance.now`). */
  readonly monotonicNow?: () => number;
  /** Timers of the root checks (the runtime's when absent). */
  readonly timers?: Timers;
  /** Federated trust domains whose roots vouch for client certificates of their own domain. */
  readonly federation?: FederatedTrust;
  /** `EXTERNAL_CA`: workload CSRs are signed there; this CA still issues the server's own certificates. */
  readonly externalSigner?: ExternalSigner;
  /** The orchestrator's TokenReview call, when an orchestrator is read: its tokens then authenticate callers. */
  readonly reviewToken?: ReviewToken;
  /** The plugged-in CA's files from the orchestrator (`USE_REMOTE_CERTS`), instead of `ROOT_CA_DIR`'s. */
  readonly plugged?: PluggedCaFiles;
}

/** The running CA. */
export class CertificateAuthority {
  readonly #keys: CaKeyStore;
  readonly #settings: CaSettings;
  readonly #deps: CaDeps;
  readonly #timers: Timers;
  #timer?: unknown;
  #closed = false;
  #service?: CaService;
  readonly #rootListeners = new Set<() => Promise<void> | void>();
  /**
   * The caller authenticators, in order: client certificate, the orchestrator's token review, then JWT. Built
   * once, so every check of a caller shares one OIDC discovery and one JWKS cache.
   */
  readonly authenticators: readonly CallerAuthenticator[];

  private constructor(keys: CaKeyStore, settings: CaSettings, deps: CaDeps) {
    this.#keys = keys;
    this.#settings = settings;
    this.#deps = deps;
    this.#timers = deps.timers ?? systemTimers;
    this.authenticators = Object.freeze(callerAuthenticators(settings, deps));
    this.#recordExpiry();
  }

  /** Loads or creates the key material. */
  static async create(settings: CaSettings, deps: CaDeps): Promise<CertificateAuthority> {
    const now = deps.now ?? (() => new Date());
    const keys = await CaKeyStore.open({
      ...settings,
      now,
      log: deps.log,
      ...(deps.plugged ? { plugged: deps.plugged } : {}),
    });
    return new CertificateAuthority(keys, settings, deps);
  }

  /** The key material in force. */
  get keys(): CaKeyStore {
    return this.#keys;
  }

  /** The trusted roots, PEM, the current first. */
  rootsPem(): string {
    return this.#keys.current.rootsPem.join("");
  }

  /** The signing service, created on first use: its rate buckets and queue live as long as this CA. */
  get service(): CaService {
    this.#service ??= new CaService({
      keys: this.#keys,
      policy: this.#settings.policy,
      limits: this.#settings.csrLimits,
      authenticators: this.authenticators,
      now: this.#deps.now ?? (() => new Date()),
      log: this.#deps.log,
      ...(this.#deps.monotonicNow ? { monotonicNow: this.#deps.monotonicNow } : {}),
      ...(this.#deps.metrics ? { metrics: this.#deps.metrics } : {}),
      ...(this.#deps.externalSigner ? { externalSigner: this.#deps.externalSigner } : {}),
    });
    return this.#service;
  }

  /** The signing service under both names. */
  services(): GrpcService[] {
    return this.service.grpcServices();
  }

  /** A serving certificate for `dnsNames`, issued by this CA: key, chain (leaf first) and roots, PEM. */
  async servingCertificate(dnsNames: readonly string[], ttlMs: number): Promise<{
    keyPem: string;
    certChainPem: string;
    caPem: string;
  }> {
    const keys = await generateKeyPair({ algorithm: "RSA" });
    const leaf = await issueCertificate(this.#keys.current.signer, {
      publicKey: keys.publicKey,
      dnsNames: [...dnsNames],
      ttlMs,
      now: (this.#deps.now ?? (() => new Date()))(),
    });
    return {
      keyPem: await exportPrivateKeyPem(keys.privateKey),
      certChainPem: [certificatesToPem([leaf]), ...this.#keys.current.chainPem.slice(0, -1)].join(""),
      caPem: this.rootsPem(),
    };
  }

  /** Checks the root every check interval (plus up to half an interval of jitter if enabled) until closed. */
  startRotation(): void {
    const schedule = () => {
      if (this.#closed) return;
      const jitter = this.#settings.jitter ? Math.random() * this.#settings.checkIntervalMs / 2 : 0;
      this.#timer = this.#timers.setTimeout(async () => {
        try {
          await this.checkRoots();
        } catch (error) {
          this.#deps.log.error("CA root check failed", { error: (error as Error).message });
        }
        schedule();
      }, this.#settings.checkIntervalMs + jitter);
    };
    schedule();
  }

  /**
   * Checks the root now (rotating it when due) and, when the signer or the trusted roots changed, records the
   * new expiry and tells every `onRootsChanged` listener; a listener's failure is logged, not thrown.
   */
  async checkRoots(): Promise<void> {
    const before = this.#keys.current;
    await this.#keys.check();
    const after = this.#keys.current;
    if (after.signer === before.signer && after.rootsPem.join("") === before.rootsPem.join("")) return;
    this.#recordExpiry();
    for (const listener of [...this.#rootListeners]) {
      try {
        await listener();
      } catch (error) {
        this.#deps.log.error("acting on the CA's new roots failed", { error: (error as Error).message });
      }
    }
  }

  /** Calls `listener` after each change of the signer or the trusted roots; returns an unsubscribe function. */
  onRootsChanged(listener: () => Promise<void> | void): () => void {
    this.#rootListeners.add(listener);
    return () => this.#rootListeners.delete(listener);
  }

  /** Stops the rotation timer; a check under way schedules no other. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
  }

  #recordExpiry(): void {
    const { signer, rootsPem } = this.#keys.current;
    const root = parseCertificatesPem(rootsPem[0], "the CA root")[0];
    this.#deps.metrics?.gauge("ca_server_cert_chain_expiry_timestamp").set(
      signer.certificate.notAfter.getTime() / 1000,
    );
    this.#deps.metrics?.gauge("ca_server_root_cert_expiry_timestamp").set(root.notAfter.getTime() / 1000);
  }
}

/**
 * Token reviews one caller address may ask for: a workload's agent asks once at start and once a renewal, and a
 * few pods may share an address (a node's host network, a NAT), so ten at once and one a second after that.
 */
const TOKEN_REVIEWS_PER_PEER = Object.freeze({ burst: 10, qps: 1 });
/** Caller addresses whose review budget is tracked at most (a refilled budget is forgotten sooner). */
const TOKEN_REVIEW_PEERS = 65_536;

/** The caller authenticators of a CA: client certificate, the orchestrator's token review, then JWT. */
function callerAuthenticators(settings: CaSettings, deps: CaDeps): CallerAuthenticator[] {
  return [
    new ClientCertAuthenticator(deps.federation),
    ...(deps.reviewToken
      ? [
        new TokenReviewAuthenticator({
          review: deps.reviewToken,
          audiences: settings.audiences,
          requireAudience: settings.requireAudience,
          jwtPolicy: settings.jwtPolicy,
          trustDomain: settings.trustDomain,
          perPeer: new KeyedRateLimiter(
            { ...TOKEN_REVIEWS_PER_PEER, maxKeys: TOKEN_REVIEW_PEERS },
            deps.monotonicNow ?? (() => performance.now()),
          ),
        }),
      ]
      : []),
    new JwtAuthenticator({
      audiences: settings.audiences,
      requireAudience: settings.requireAudience,
      issuer: settings.issuer,
      trustDomain: settings.trustDomain,
    }),
  ];
}
