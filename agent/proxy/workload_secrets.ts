/**
 * The workload's certificate and the mesh roots, kept fresh: a key pair (RSA 2048, or ECDSA P-256 with
 * `ECC_SIGNATURE_ALGORITHM=ECDSA`; PKCS#8 with `PKCS8_KEY`, else PKCS#1/SEC1), a CSR signed by the CA for `SECRET_TTL`, renewed once
 * `SECRET_GRACE_PERIOD_RATIO` of its life has passed (checked every `SECRET_ROTATION_CHECK_INTERVAL`). A failed
 * renewal keeps the current certificate and retries with backoff. Listeners hear of every new secret. With
 * `INITIAL_BACKOFF_MSEC`, each renewal first waits a random part of it, so the agents of a fleet started (or
 * rotating) together do not all reach the CA at once; the CSR names `spiffe://TRUST_DOMAIN/ns/<namespace>/sa/
 * SERVICE_ACCOUNT` when the service account is known, as the reference's does.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { parseCertificateFactsPem } from "@mesh/shared/pki/certificate_facts";
import { generateKeyPair } from "@mesh/shared/pki/key_pair";
import { exportPrivateKeyPem, exportTraditionalPrivateKeyPem } from "@mesh/shared/pki/private_key_pem";
import { createUriCertificateRequest } from "@mesh/shared/pki/uri_certificate_request";

/** The workload's certificate, key and roots, PEM. */
export interface WorkloadSecret {
  readonly certChainPem: string;
  readonly privateKeyPem: string;
  readonly rootPem: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** Where SDS and the xDS proxy get the workload secret: the CA-backed manager, or mounted files. */
export interface SecretProvider {
  /** The current secret, if there is one yet. */
  readonly current: WorkloadSecret | undefined;
  /** Subscribes to new secrets; returns an unsubscribe. */
  onChange(listener: (secret: WorkloadSecret) => void): () => void;
}

/** Signs a CSR (the CA client in production). */
export interface CsrSigner {
  sign(csrPem: string, ttlSeconds: number): Promise<string[]>;
}

/** Settings of the secret manager. */
export interface WorkloadSecretsOptions {
  readonly signer: CsrSigner;
  /** `SECRET_TTL`, in seconds. */
  readonly ttlSeconds: number;
  /** `SECRET_GRACE_PERIOD_RATIO`: renew once this fraction of the life has passed. */
  readonly graceRatio: number;
  /** `SECRET_ROTATION_CHECK_INTERVAL`, in milliseconds. */
  readonly checkIntervalMs: number;
  /** `ECC_SIGNATURE_ALGORITHM=ECDSA`. */
  readonly ecdsa: boolean;
  /** `PKCS8_KEY`: the key as PKCS#8; else PKCS#1 (RSA) or SEC1 (ECDSA), as the reference writes it. */
  readonly pkcs8?: boolean;
  /** The roots when the CA's chain does not end in one the agent should trust (else the chain's last). */
  readonly rootPem?: string;
  /** The workload's SPIFFE id, put in the CSR's SAN; absent: the CSR names nothing and the CA decides. */
  readonly csrUri?: string;
  /** `INITIAL_BACKOFF_MSEC`: each renewal first waits a random time below this; 0: none. */
  readonly initialBackoffMs?: number;
  /** The jitter source, [0, 1); default `Math.random`. */
  readonly random?: () => number;
  readonly log: Logger;
  readonly now?: () => Date;
  /** The check and backoff timers; default the runtime's. */
  readonly timers?: Timers;
}

/** Keeps the workload secret fresh and tells listeners of each new one. */
export class WorkloadSecrets implements SecretProvider {
  readonly #options: WorkloadSecretsOptions;
  readonly #listeners = new Set<(secret: WorkloadSecret) => void>();
  #current?: WorkloadSecret;
  #timer?: unknown;
  #failures = 0;
  #closed = false;
  readonly #timers: Timers;

  constructor(options: WorkloadSecretsOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
  }

  /** The current secret, if one was issued yet. */
  get current(): WorkloadSecret | undefined {
    return this.#current;
  }

  /** Subscribes to new secrets; returns an unsubscribe. */
  onChange(listener: (secret: WorkloadSecret) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Issues the first secret (retrying with backoff until it succeeds), then checks on the interval. */
  start(): void {
    void this.#tick();
  }

  /** Stops renewing. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
  }

  /** Issues a new secret now; resolves with it. */
  async renew(): Promise<WorkloadSecret> {
    const keys = await generateKeyPair(this.#options.ecdsa ? { algorithm: "ECDSA" } : { algorithm: "RSA" });
    const uri = this.#options.csrUri;
    const csr = await createUriCertificateRequest(keys, uri ? [uri] : []);
    const chain = await this.#options.signer.sign(csr, this.#options.ttlSeconds);
    const [leaf] = parseCertificateFactsPem(chain[0], "the CA's leaf");
    const secret: WorkloadSecret = {
      certChainPem: chain.slice(0, -1).join("") || chain[0],
      privateKeyPem: this.#options.pkcs8
        ? await exportPrivateKeyPem(keys.privateKey)
        : await exportTraditionalPrivateKeyPem(keys.privateKey),
      rootPem: this.#options.rootPem ?? chain.at(-1)!,
      // The life counts from now, not from the leaf's notBefore, which CAs backdate to allow for clock skew.
      notBefore: new Date(
        Math.max(leaf.notBefore.getTime(), (this.#options.now ?? (() => new Date()))().getTime()),
      ),
      notAfter: leaf.notAfter,
    };
    this.#current = secret;
    this.#options.log.info("workload certificate issued", { notAfter: secret.notAfter.toISOString() });
    for (const listener of this.#listeners) listener(secret);
    return secret;
  }

  #due(): boolean {
    const current = this.#current;
    if (current === undefined) return true;
    const now = (this.#options.now ?? (() => new Date()))().getTime();
    const life = current.notAfter.getTime() - current.notBefore.getTime();
    return now >= current.notBefore.getTime() + life * this.#options.graceRatio;
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    let wait = this.#options.checkIntervalMs;
    if (this.#due()) {
      const jitterMs = this.#failures === 0
        ? Math.floor((this.#options.random ?? Math.random)() * (this.#options.initialBackoffMs ?? 0))
        : 0;
      // The jitter comes before the first attempt of a renewal only: retries have their own backoff.
      if (jitterMs > 0) {
        await new Promise<void>((resolve) => this.#timer = this.#timers.setTimeout(resolve, jitterMs));
      }
      if (this.#closed) return;
      try {
        await this.renew();
        this.#failures = 0;
      } catch (error) {
        this.#failures++;
        wait = Math.min(this.#options.checkIntervalMs, 200 * 2 ** Math.min(this.#failures, 8));
        this.#options.log.warn("workload certificate request failed; keeping the current one and retrying", {
          retryMs: wait,
          error: (error as Error).message,
        });
      }
    }
    if (!this.#closed) this.#timer = this.#timers.setTimeout(() => void this.#tick(), wait);
  }
}
