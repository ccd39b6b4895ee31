/**
 * The agent's client of the CA: sends a CSR over TLS (verifying the CA against the mesh root) with the
 * workload's token as a bearer credential, and returns the chain.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import type { Metrics } from "../../shared/metrics/metrics.ts";
import {
  caServiceDefinition,
  type CertificateResponseMessage,
  MESH_CA_SERVICE,
} from "../../proto/ca_service.ts";

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
  /** A provisioned client certificate (`PROV_CERT`) presented to the CA, for workloads without a token. */
  readonly clientCert?: { readonly keyPem: string; readonly certChainPem: string };
  /** Where requests, failures, retries and latency are counted (`request_type="csr"`). */
  readonly metrics?: Metrics;
}

const CSR = { request_type: "csr" };

/** Signs CSRs through the CA. */
export class CaClient {
  readonly #client: grpc.Client;
  readonly #options: CaClientOptions;
  #lastFailed = false;

  constructor(options: CaClientOptions) {
    this.#options = options;
    const Client = grpc.makeGenericClientConstructor(caServiceDefinition(MESH_CA_SERVICE), MESH_CA_SERVICE);
    const credentials = options.clientCert
      ? grpc.credentials.createSsl(
        Buffer.from(options.rootPem),
        Buffer.from(options.clientCert.keyPem),
        Buffer.from(options.clientCert.certChainPem),
      )
      : grpc.credentials.createSsl(Buffer.from(options.rootPem));
    this.#client = new Client(options.address, credentials, {
      ...(options.serverName ? { "grpc.ssl_target_name_override": options.serverName } : {}),
    });
  }

  /**
   * Sends `csrPem` asking for `ttlSeconds`; resolves with the chain, leaf first.
   *
   * @throws the gRPC error the CA answered with, or a deadline error after 10 s
   */
  async sign(csrPem: string, ttlSeconds: number): Promise<string[]> {
    const metadata = new grpc.Metadata();
    const token = await this.#options.token();
    if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
    const { metrics } = this.#options;
    metrics?.counter("num_outgoing_requests").inc(CSR);
    // A request after a failed one is a retry: the secret manager retries with backoff.
    if (this.#lastFailed) metrics?.counter("num_outgoing_retries").inc(CSR);
    const started = performance.now();
    try {
      const chain = await this.#request(csrPem, ttlSeconds, metadata);
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

  #request(csrPem: string, ttlSeconds: number, metadata: grpc.Metadata): Promise<string[]> {
    return new Promise<string[]>((resolve, reject) => {
      // deno-lint-ignore no-explicit-any
      (this.#client as any).CreateCertificate(
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
    this.#client.close();
  }
}
