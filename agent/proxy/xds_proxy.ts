/**
 * The xDS proxy on a Unix socket: each ADS stream the proxy opens is relayed, byte for byte, to the discovery
 * server over TLS with the workload certificate (or plaintext when the control plane auth policy is NONE).
 * When the upstream stream fails, the downstream one ends with UNAVAILABLE so the proxy reconnects.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "../../proto/ads_service.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { type RunningGrpcServer, startGrpcServer } from "../../shared/grpc/mod.ts";
import type { WorkloadSecrets } from "./workload_secrets.ts";

/** Where the relay goes. */
export interface XdsUpstream {
  /** `host:port` of the discovery server. */
  readonly address: string;
  /** Mutual TLS with the workload certificate; false for plaintext. */
  readonly mutualTls: boolean;
  /** The TLS name to check on the discovery server's certificate. */
  readonly serverName: string;
}

/** Relays ADS from `socket` to `upstream`. */
export async function startXdsProxy(
  socket: string,
  upstream: XdsUpstream,
  secrets: WorkloadSecrets,
  log: Logger,
): Promise<RunningGrpcServer> {
  const Client = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");
  let client: grpc.Client | undefined;
  let clientFor: unknown;
  const channel = (): grpc.Client => {
    const secret = secrets.current;
    // A new certificate means a new channel: the next stream presents it.
    if (client !== undefined && clientFor === secret) return client;
    client?.close();
    const credentials = upstream.mutualTls && secret !== undefined
      ? grpc.credentials.createSsl(
        Buffer.from(secret.rootPem),
        Buffer.from(secret.privateKeyPem),
        Buffer.from(secret.certChainPem),
      )
      : grpc.credentials.createInsecure();
    client = new Client(upstream.address, credentials, {
      ...(upstream.mutualTls ? { "grpc.ssl_target_name_override": upstream.serverName } : {}),
      "grpc.max_receive_message_length": -1,
    });
    clientFor = secret;
    return client;
  };
  const implementation = {
    StreamAggregatedResources(down: grpc.ServerDuplexStream<Buffer, Buffer>) {
      if (upstream.mutualTls && secrets.current === undefined) {
        down.emit("error", { code: grpc.status.UNAVAILABLE, details: "no workload certificate yet; retry" });
        return;
      }
      // deno-lint-ignore no-explicit-any
      const up: grpc.ClientDuplexStream<Buffer, Buffer> = (channel() as any).StreamAggregatedResources();
      up.on("data", (data: Buffer) => down.write(data));
      up.on("error", (error: grpc.ServiceError) => {
        log.warn("upstream ADS stream failed; ending the proxy's stream so it reconnects", {
          code: error.code,
          details: error.details,
        });
        down.emit("error", { code: grpc.status.UNAVAILABLE, details: `upstream: ${error.details}` });
      });
      up.on("end", () => down.end());
      down.on("data", (data: Buffer) => up.write(data));
      down.on("end", () => up.end());
      down.on("cancelled", () => up.cancel());
      down.on("error", () => up.cancel());
    },
  };
  const server = await startGrpcServer({
    name: "XDS proxy",
    listen: { unix: socket, flag: "the XDS socket" },
    services: [{ definition: ADS_SERVICE_DEFINITION, implementation: implementation as never }],
    logger: log,
  });
  return {
    ...server,
    close: async (graceMs?: number) => {
      await server.close(graceMs);
      client?.close();
    },
  };
}
