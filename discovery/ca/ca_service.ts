/**
 * The CA's gRPC service: authenticate the caller, sign its CSR for the identity it proved, answer with the
 * chain. Served under our service name and Istio's. Every outcome is counted in the `ca_server_*` metrics.
 *
 * Before any CSR is decoded, the caller's identity must have a token in its bucket and the CSR must fit in
 * `CASERVER_CSR_MAX_BYTES`; signings then run a bounded few at a time behind a bounded queue, so a flood of
 * requests costs the event loop a few short stretches at a time instead of all of them at once.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import { excerpt } from "@mesh/shared/log/excerpt";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { GrpcService } from "@mesh/shared/grpc";
import { GrpcStatusError } from "@mesh/shared/grpc/grpc_status";
import {
  caServiceDefinition,
  type CertificateRequestMessage,
  type CertificateResponseMessage,
  ISTIO_CA_SERVICE,
  MESH_CA_SERVICE,
} from "@mesh/proto/ca_service";
import {
  authenticateCaller,
  AuthenticationError,
  type CallerAuthenticator,
  type CallerCredentials,
} from "./caller_authenticator.ts";
import { callerCredentialsOf } from "./caller_credentials.ts";
import type { CaKeyStore } from "./ca_keys.ts";
import { CaRequestError, checkCsrSize, signCsr, type SigningPolicy } from "./ca_signer.ts";
import { KeyedRateLimiter } from "@mesh/shared/time/keyed_rate_limiter";
import { SigningQueue, SigningQueueFullError } from "./signing_queue.ts";
import { type ExternalSigner, ExternalSignerError } from "../model/external_signer.ts";
import { checkForwardedCsr } from "./forwarded_csr.ts";
import { PEER_LOG_PERIOD_MS, PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";

/** The CA's bounds on what callers may ask of it. */
export interface CsrLimits {
  /** `CASERVER_CSR_MAX_BYTES`: the longest CSR PEM accepted. */
  readonly maxCsrBytes: number;
  /** `CASERVER_CSR_RATE_LIMIT_QPS`: requests per second per identity, after the burst. */
  readonly rateQps: number;
  /** `CASERVER_CSR_RATE_LIMIT_BURST`: requests per identity at once. */
  readonly rateBurst: number;
  /** Identities whose buckets are tracked at most (the least recently seen is forgotten past it). */
  readonly rateIdentities: number;
  /** `CASERVER_MAX_CONCURRENT_SIGNINGS`: signings running at once. */
  readonly maxConcurrentSignings: number;
  /** `CASERVER_SIGNING_QUEUE_SIZE`: signings waiting at most; past it requests are refused. */
  readonly signingQueueSize: number;
}

/** The limits with the registry's defaults, for tests and embedding. */
export const DEFAULT_CSR_LIMITS: CsrLimits = Object.freeze({
  // A workload's CSR is about 1 KiB of PEM (an RSA 4096 key with a few names stays under 3 KiB).
  maxCsrBytes: 16_384,
  rateQps: 5,
  rateBurst: 10,
  rateIdentities: 10_000,
  maxConcurrentSignings: 2,
  signingQueueSize: 1024,
});

/** What a caller past the signing queue is told to wait before retrying. */
const QUEUE_FULL_RETRY_MS = 1000;

/** What the CA service needs. */
export interface CaServiceDeps {
  /** The signing key material. */
  readonly keys: CaKeyStore;
  /** TTL limits. */
  readonly policy: SigningPolicy;
  /** Size, rate and concurrency limits. */
  readonly limits: CsrLimits;
  /** Authenticators, in order. */
  readonly authenticators: readonly CallerAuthenticator[];
  /** The wall clock: the issued certificates' validity starts at it. */
  readonly now: () => Date;
  /** Monotonic milliseconds for the rate limits (default `performance.now`; a fake clock in tests). */
  readonly monotonicNow?: () => number;
  /** Logger of the CA. */
  readonly log: Logger;
  /** Where `ca_server_*` go. */
  readonly metrics?: Metrics;
  /** `EXTERNAL_CA`: the CA that signs workload CSRs instead of this one; none signs here. */
  readonly externalSigner?: ExternalSigner;
}

/** The signing service with its per-identity buckets and its signing queue; one per CA. */
export class CaService {
  readonly #deps: CaServiceDeps;
  readonly #rates: KeyedRateLimiter;
  /** Paces the lines about refused CSRs, per identity and reason. */
  readonly #refusals: PeerLogLimiter;
  readonly #queue: SigningQueue;
  /** Whether the queue's filling up was logged since it last accepted a request. */
  #queueFullLogged = false;

  /** Throws RangeError for limits outside their ranges. */
  constructor(deps: CaServiceDeps) {
    this.#deps = deps;
    this.#rates = new KeyedRateLimiter({
      qps: deps.limits.rateQps,
      burst: deps.limits.rateBurst,
      maxKeys: deps.limits.rateIdentities,
    }, deps.monotonicNow ?? (() => performance.now()));
    this.#refusals = new PeerLogLimiter(PEER_LOG_PERIOD_MS, deps.monotonicNow ?? (() => performance.now()));
    this.#queue = new SigningQueue({
      concurrency: deps.limits.maxConcurrentSignings,
      queueSize: deps.limits.signingQueueSize,
    });
  }

  /** Signings running and waiting. */
  get queueStats(): { running: number; waiting: number } {
    return this.#queue.stats;
  }

  /**
   * Signs one call's request; the error carries the gRPC status it maps to. A call that ends (`signal`) while
   * its request waits in the queue is dropped from it.
   */
  async createCertificate(
    request: CertificateRequestMessage,
    credentials: CallerCredentials,
    signal?: AbortSignal,
  ): Promise<CertificateResponseMessage> {
    const deps = this.#deps;
    const count = (name: string) => deps.metrics?.counter(name).inc();
    const refuse = (reason: string) => deps.metrics?.counter("ca_server_csr_refused_count").inc({ reason });
    count("ca_server_csr_count");
    let identities: string[];
    try {
      identities = await authenticateCaller(deps.authenticators, credentials);
    } catch (error) {
      count("ca_server_authentication_failure_count");
      if (error instanceof AuthenticationError && error.identityMissing) {
        count("ca_server_id_extraction_err_count");
      }
      throw new GrpcStatusError(
        grpc.status.UNAUTHENTICATED,
        `Unauthenticated: ${(error as AuthenticationError).message}`,
        { cause: error },
      );
    }
    const identity = [...identities].sort().join(",");
    const rate = this.#rates.take(identity);
    if (!rate.allowed) {
      refuse("rate_limited");
      if (rate.first) {
        deps.log.warn("CA rate-limited a caller", { identity, retryAfterMs: rate.retryAfterMs });
      }
      const who = `"${excerpt(identity, 200)}"`;
      throw new GrpcStatusError(
        grpc.status.RESOURCE_EXHAUSTED,
        `Too many certificate requests from ${who}: expected at most ${deps.limits.rateBurst} at once and ` +
          `${deps.limits.rateQps} a second (CASERVER_CSR_RATE_LIMIT_BURST, CASERVER_CSR_RATE_LIMIT_QPS); ` +
          `retry in ${rate.retryAfterMs} ms`,
        { retryAfterMs: rate.retryAfterMs },
      );
    }
    try {
      checkCsrSize(request.csr, deps.limits.maxCsrBytes);
      if (deps.externalSigner !== undefined) {
        return { certChain: await this.#forward(deps.externalSigner, request, identities, signal) };
      }
      const chain = await this.#queue.run(
        () =>
          signCsr(
            { csrPem: request.csr, validitySeconds: request.validityDuration, identities },
            deps.keys.current,
            deps.policy,
            deps.now(),
          ),
        signal,
      );
      this.#queueFullLogged = false;
      count("ca_server_success_cert_issuance_count");
      return { certChain: chain };
    } catch (error) {
      if (error instanceof SigningQueueFullError) {
        refuse("queue_full");
        if (!this.#queueFullLogged) deps.log.warn("CA signing queue is full", { waiting: error.waiting });
        this.#queueFullLogged = true;
        throw new GrpcStatusError(
          grpc.status.RESOURCE_EXHAUSTED,
          `The CA is busy: ${error.waiting} certificate requests are waiting (CASERVER_SIGNING_QUEUE_SIZE); ` +
            `retry in ${QUEUE_FULL_RETRY_MS} ms`,
          { retryAfterMs: QUEUE_FULL_RETRY_MS },
        );
      }
      if (error instanceof CaRequestError) {
        if (error.reason === "csr_too_large") refuse("too_large");
        else if (error.reason === "sign") count("ca_server_csr_sign_err_count");
        else count("ca_server_csr_parsing_err_count");
        // A caller within its rate can still send a bad CSR every time: one line per identity and reason a minute.
        this.#refusals.log(
          `${identity} ${error.reason}`,
          (passedOver) =>
            deps.log.warn("CA refused a request", {
              identities,
              reason: error.reason,
              error: error.message,
              ...(passedOver > 0 && { notLogged: passedOver }),
            }),
        );
        throw new GrpcStatusError(
          error.reason === "sign" ? grpc.status.INTERNAL : grpc.status.INVALID_ARGUMENT,
          error.message,
          { cause: error },
        );
      }
      if (signal?.aborted) {
        throw new GrpcStatusError(grpc.status.CANCELLED, "The call ended while its CSR waited");
      }
      throw error;
    }
  }

  /**
   * Checks the CSR and has the external CA sign it; it waits outside the signing queue, bounded by the
   * signer's own deadline, so a slow external CA does not hold up anything signed here.
   */
  async #forward(
    signer: ExternalSigner,
    request: CertificateRequestMessage,
    identities: string[],
    signal?: AbortSignal,
  ): Promise<string[]> {
    const ttlMs = await checkForwardedCsr(
      request.csr,
      request.validityDuration,
      identities,
      this.#deps.policy,
    );
    try {
      const chain = await signer.sign({ csrPem: request.csr, identities, ttlMs }, signal);
      this.#deps.metrics?.counter("ca_server_success_cert_issuance_count").inc();
      return chain;
    } catch (error) {
      if (!(error instanceof ExternalSignerError)) throw error;
      this.#deps.metrics?.counter("ca_server_csr_sign_err_count").inc();
      this.#deps.log.warn("the external CA did not sign", {
        identities,
        reason: error.reason,
        error: error.message,
      });
      throw new GrpcStatusError(
        error.reason === "denied" ? grpc.status.PERMISSION_DENIED : grpc.status.UNAVAILABLE,
        error.message,
        { cause: error },
      );
    }
  }

  /** The service under both names, for `startGrpcServer`. */
  grpcServices(): GrpcService[] {
    const implementation = {
      CreateCertificate: (
        call: grpc.ServerUnaryCall<CertificateRequestMessage, CertificateResponseMessage>,
        callback: grpc.sendUnaryData<CertificateResponseMessage>,
      ) => {
        const ended = new AbortController();
        call.once("cancelled", () => ended.abort());
        this.createCertificate(call.request, callerCredentialsOf(call), ended.signal)
          .then((response) => callback(null, response), (error) => callback(error));
      },
    };
    return [MESH_CA_SERVICE, ISTIO_CA_SERVICE].map((name) => ({
      definition: caServiceDefinition(name),
      implementation: implementation as unknown as grpc.UntypedServiceImplementation,
    }));
  }
}
