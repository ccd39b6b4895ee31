/**
 * SDS for the proxy on a Unix socket: `default` (the workload's certificate chain and key) and `ROOTCA` (the
 * mesh roots), state of the world. A stream gets what it asks for as soon as the secret exists, and every new
 * secret after that; ACKs are taken, NACKs logged.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type * as grpc from "@grpc/grpc-js";
import type { ServiceDefinition } from "@grpc/grpc-js";
import { encodeAny } from "../../proto/any_codec.ts";
import { decodeDiscoveryRequest } from "../../proto/discovery_request.ts";
import { frameDiscoveryResponse } from "../../proto/discovery_frame.ts";
import { TYPE_URL } from "../../proto/type_urls.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { type RunningGrpcServer, startGrpcServer } from "../../shared/grpc/mod.ts";
import type { WorkloadSecret, WorkloadSecrets } from "./workload_secrets.ts";

/** The SDS name of the workload certificate. */
export const WORKLOAD_SECRET = "default";
/** The SDS name of the mesh roots. */
export const ROOT_SECRET = "ROOTCA";

const SDS_SERVICE = "envoy.service.secret.v3.SecretDiscoveryService";
const bytes = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** SDS with byte-level (de)serializers. */
export const SDS_SERVICE_DEFINITION = {
  StreamSecrets: {
    path: `/${SDS_SERVICE}/StreamSecrets`,
    requestStream: true,
    responseStream: true,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  },
} as const satisfies ServiceDefinition;

/** The Envoy Secret named `name` from the workload secret. */
export function envoySecret(name: string, secret: WorkloadSecret): Record<string, unknown> {
  return name === ROOT_SECRET
    ? { name, validation_context: { trusted_ca: { inline_string: secret.rootPem } } }
    : {
      name,
      tls_certificate: {
        certificate_chain: { inline_string: secret.certChainPem },
        private_key: { inline_string: secret.privateKeyPem },
      },
    };
}

/** Serves SDS on `socket` from `secrets`. */
export async function startSdsServer(
  socket: string,
  secrets: WorkloadSecrets,
  log: Logger,
): Promise<RunningGrpcServer> {
  let version = 0;
  const implementation = {
    StreamSecrets(call: grpc.ServerDuplexStream<Buffer, Buffer>) {
      let names: string[] = [];
      let nonce = 0;
      const send = (secret: WorkloadSecret) => {
        const wanted = names.filter((n) => n === WORKLOAD_SECRET || n === ROOT_SECRET);
        if (wanted.length === 0) return;
        call.write(bytes(frameDiscoveryResponse({
          version_info: String(version),
          type_url: TYPE_URL.secret,
          nonce: String(++nonce),
          resources: wanted.map((n) => encodeAny(TYPE_URL.secret, envoySecret(n, secret))),
        })));
      };
      const unsubscribe = secrets.onChange((secret) => {
        version++;
        send(secret);
      });
      call.on("data", (data: Buffer) => {
        let request;
        try {
          request = decodeDiscoveryRequest(data);
        } catch (error) {
          log.warn("SDS request is not a DiscoveryRequest; ending the stream", {
            error: (error as Error).message,
          });
          call.end();
          return;
        }
        if (request.error_detail !== undefined) {
          log.warn("proxy rejected a secret", { names, detail: request.error_detail.message });
        }
        const asked = [...request.resource_names].sort();
        if (asked.join() === names.join() && request.response_nonce !== "") return;
        names = asked;
        if (secrets.current !== undefined) send(secrets.current);
      });
      const done = () => unsubscribe();
      call.on("end", () => {
        done();
        call.end();
      });
      call.on("error", done);
      call.on("cancelled", done);
    },
  };
  return await startGrpcServer({
    name: "SDS",
    listen: { unix: socket, flag: "the SDS socket" },
    services: [{ definition: SDS_SERVICE_DEFINITION, implementation: implementation as never }],
    logger: log,
  });
}
