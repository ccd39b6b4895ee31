/**
 * The agent's client of the CA: sends a CSR over TLS (verifying the CA against the mesh root) with the
 * workload's token as a bearer credential, and returns the chain.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
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
}

/** Signs CSRs through the CA. */
export class CaClient {
  readonly #client: grpc.Client;
  readonly #options: CaClientOptions;

  constructor(options: CaClientOptions) {
    this.#options = options;
    const Client = grpc.makeGenericClientConstructor(caServiceDefinition(MESH_CA_SERVICE), MESH_CA_SERVICE);
    this.#client = new Client(options.address, grpc.credentials.createSsl(Buffer.from(options.rootPem)), {
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
    return await new Promise<string[]>((resolve, reject) => {
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
