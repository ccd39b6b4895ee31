/**
 * The agent's client of the CA: sends a CSR over TLS (verifying the CA against the mesh root) with the
 * workload's token as a bearer credential, and returns the chain. With a provisioned certificate (`PROV_CERT`)
 * it presents that certificate instead, read again for every request so a rotated one (a VM whose `OUTPUT_CERTS`
 * is its `PROV_CERT`) is the next one presented; the token then goes too only with `USE_TOKEN_FOR_CSR`, as the
 * reference's `useCertToRotate` decides.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import {
  caServiceDefinition,
  type CertificateResponseMessage,
  MESH_CA_SERVICE,
} from "@mesh/proto/ca_service";

/** Where and how to reach the CA. */
export interface CaClientOptions {
  /** `CA_ADDR`, `host:port`. */
  readonly address: string;
  /** The roots that must have signed the CA's serving certificate. */
  readonly rootPem: string;
  /** Reads the current token (it may be rotated on disk); undefined sends none. */
  readonly token: () => Promise<string | undefined>;
  /** TLS server name to check, when the address is not it (e.g. `meshd.mesh-system.svc`). */
  readonly serverName?: string;
  /** `PROV_CERT`: a folder holding a provisioned `cert-chain.pem` and `key.pem` presented to the CA. */
  readonly provisionedDir?: string;
  /** `USE_TOKEN_FOR_CSR`: send the token even when the provisioned certificate is presented. */
  readonly tokenWithCert?: boolean;
  /** `CA_PROVIDER`'s gRPC service; default ours. */
  readonly service?: string;
  /** Where requests, failures, retries and latency are counted (`request_type="csr"`). */
  readonly metrics?: Metrics;
  /** Says once per change when the provisioned certificate cannot be read. */
  readonly log?: Logger;
}

const CSR = { request_type: "csr" };

/** The provisioned key pair's files, as `PROV_CERT` holds them. */
const PROVISIONED = { key: "key.pem", chain: "cert-chain.pem" } as const;

/** Signs CSRs through the CA. */
export class CaClient {
  readonly #options: CaClientOptions;
  readonly #Client: grpc.ServiceClientConstructor;
  #client?: grpc.Client;
  /** The provisioned key and chain the current channel presents; empty: none. */
  #clientFor = "";
  #lastFailed = false;
  #provisionedError = "";

  constructor(options: CaClientOptions) {
    this.#options = options;
    const service = options.service ?? MESH_CA_SERVICE;
    this.#Client = grpc.makeGenericClientConstructor(caServiceDefinition(service), service);
  }

  /** The provisioned key and chain, or undefined (logged once per reason) when there is none to present. */
  async #provisioned(): Promise<{ keyPem: string; certChainPem: string } | undefined> {
    const dir = this.#options.provisionedDir;
    if (dir === undefined || dir === "") return undefined;
    try {
      const [keyPem, certChainPem] = await Promise.all([
        Deno.readTextFile(join(dir, PROVISIONED.key)),
        Deno.readTextFile(join(dir, PROVISIONED.chain)),
      ]);
      this.#provisionedError = "";
      return { keyPem, certChainPem };
    } catch (error) {
      const message = (error as Error).message;
      if (message !== this.#provisionedError) {
        this.#options.log?.warn("PROV_CERT has no usable certificate; authenticating with the token", {
          dir,
          error: message,
        });
        this.#provisionedError = message;
      }
      return undefined;
    }
  }

  /** The channel presenting `pair`, made anew when the pair changed since the last request. */
  #channel(pair: { keyPem: string; certChainPem: string } | undefined): grpc.Client {
    const key = pair ? pair.keyPem + pair.certChainPem : "";
    if (this.#client !== undefined && this.#clientFor === key) return this.#client;
    this.#client?.close();
    const root = Buffer.from(this.#options.rootPem);
    const credentials = pair
      ? grpc.credentials.createSsl(root, Buffer.from(pair.keyPem), Buffer.from(pair.certChainPem))
      : grpc.credentials.createSsl(root);
    this.#client = new this.#Client(this.#options.address, credentials, {
      ...(this.#options.serverName ? { "grpc.ssl_target_name_override": this.#options.serverName } : {}),
    });
    this.#clientFor = key;
    return this.#client;
  }

  /**
   * Sends `csrPem` asking for `ttlSeconds`; resolves with the chain, leaf first.
   *
   * @throws the gRPC error the CA answered with, or a deadline error after 10 s
   */
  async sign(csrPem: string, ttlSeconds: number): Promise<string[]> {
    const metadata = new grpc.Metadata();
    const pair = await this.#provisioned();
    // The provisioned certificate authenticates alone unless the CA wants a token as well.
    const token = pair === undefined || this.#options.tokenWithCert ? await this.#options.token() : undefined;
    if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
    const { metrics } = this.#options;
    metrics?.counter("num_outgoing_requests").inc(CSR);
    // A request after a failed one is a retry: the secret manager retries with backoff.
    if (this.#lastFailed) metrics?.counter("num_outgoing_retries").inc(CSR);
    const started = performance.now();
    try {
      const chain = await this.#request(this.#channel(pair), csrPem, ttlSeconds, metadata);
      this.#lastFailed = false;
      return chain;
    } catch (error) {
      this.#lastFailed = true;
      metrics?.counter("num_failed_outgoing_requests").inc(CSR);
      throw error;
    } finally {
      metrics?.counter("outgoing_latency").inc(CSR, Math.round(performance.now() - started));
    }
  }

  #request(
    client: grpc.Client,
    csrPem: string,
    ttlSeconds: number,
    metadata: grpc.Metadata,
  ): Promise<string[]> {
    return new Promise<string[]>((resolve, reject) => {
      // deno-lint-ignore no-explicit-any
      (client as any).CreateCertificate(
        { csr: csrPem, validityDuration: ttlSeconds },
        metadata,
        { deadline: Date.now() + 10_000 },
        (error: grpc.ServiceError | null, response: CertificateResponseMessage) =>
          error ? reject(error) : resolve([...response.certChain]),
      );
    });
  }

  /** Closes the channel. */
  close(): void {
    this.#client?.close();
  }
}
