/**
 * SDS for the proxy on a Unix socket: `default` (the workload's certificate chain and key) and `ROOTCA` (the
 * mesh roots), state of the world; for gateways also the credentials of `GATEWAY_CREDENTIALS_DIR` by their
 * `credentialName` (and `<credentialName>-cacert` for their CA certificates). A stream gets what it asks for as
 * soon as the secret exists, and every new secret after that, each through the stream's send port. Requests are
 * judged by their nonce as ADS judges them ({@link replyKind}): a NACK is counted and logged and answered with
 * nothing (the proxy keeps its last good secret), a stale nonce is ignored, an ACK settles the latest push and
 * only a change of names is answered. Streams that never acknowledge what they were sent are closed every
 * `STALED_CONNECTION_RECYCLE_RUN_INTERVAL`.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import type { ServiceDefinition } from "@grpc/grpc-js";
import { frameDiscoveryResponse } from "@mesh/proto/discovery_frame";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { type RunningGrpcServer, startGrpcServer } from "@mesh/shared/grpc";
import type { SecretProvider, WorkloadSecret } from "./workload_secrets.ts";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { StreamClosedError } from "@mesh/shared/grpc/send_port";
import { replyKind } from "@mesh/shared/xds/reply_kind";
import { excerpt } from "@mesh/shared/log/excerpt";
import { PEER_LOG_PERIOD_MS, PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import { proxySendPorts } from "./proxy_send_ports.ts";
import { readDiscoveryRequest } from "./discovery_wire.ts";
import { encodeSecretAny } from "./secret_wire.ts";
import {
  credentialOfSdsName,
  envoyCredentialSecret,
  type TlsCredential,
} from "@mesh/shared/credentials/tls_credential";

/** The SDS name of the workload certificate. */
export const WORKLOAD_SECRET = "default";
/** The SDS name of the mesh roots. */
export const ROOT_SECRET = "ROOTCA";

const SDS_SERVICE = "envoy.service.secret.v3.SecretDiscoveryService";
const bytes = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** The `resource_name` label of a name the agent does not serve: the proxy chooses names, the series are few. */
export const OTHER_RESOURCE_LABEL = "other";

/** Names a rejection or a refusal quotes at most; the count says how many there were. */
const LOGGED_NAMES = 5;

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

/** Options of the SDS server. */
export interface SdsServerOptions {
  /** The Unix socket path. */
  readonly socket: string;
  readonly secrets: SecretProvider;
  /** Gateway credentials by name (`GATEWAY_CREDENTIALS_DIR`); absent: only the workload's secrets are served. */
  readonly credentials?: CredentialSource;
  readonly log: Logger;
  /** Where pushes, failures, connections and stale streams are counted; nothing is counted when absent. */
  readonly metrics?: Metrics;
  /**
   * `STALED_CONNECTION_RECYCLE_RUN_INTERVAL`: streams that have not acknowledged the secret pushed to them for
   * this long are closed (the proxy reconnects and gets the current one); absent: never.
   */
  readonly staleRecycleMs?: number;
  /** Times the stale-stream recycling and the send timeout; default the runtime's. */
  readonly timers?: Timers;
  /** How long the proxy may take to read one push before its stream is ended; default `PROXY_SEND_TIMEOUT_MS`. */
  readonly sendTimeoutMs?: number;
}

/** Named TLS credentials, and word of which changed. */
export interface CredentialSource {
  get(name: string): TlsCredential | undefined;
  /** Calls `listener` with the name of every credential added, changed or removed; returns an unsubscribe. */
  onChange(listener: (name: string) => void): () => void;
}

interface StreamState {
  /** The version last sent and when; cleared by the proxy's ACK. */
  unacked?: { version: string; since: number };
  close(): void;
}

/** Whether two sorted lists of names are the same, name by name (a joined list cannot tell "a,b" from "a", "b"). */
function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

/** Serves SDS on `options.socket` from `options.secrets`. */
export async function startSdsServer(options: SdsServerOptions): Promise<RunningGrpcServer> {
  const { secrets, credentials, log, metrics } = options;
  const timers = options.timers ?? systemTimers;
  /** The Envoy secrets among `names` that exist now. */
  const resourcesFor = (names: readonly string[]): Record<string, unknown>[] => {
    const out: Record<string, unknown>[] = [];
    for (const name of names) {
      if (name === WORKLOAD_SECRET || name === ROOT_SECRET) {
        if (secrets.current !== undefined) out.push(envoySecret(name, secrets.current));
        continue;
      }
      const { credential, caOnly } = credentialOfSdsName(name);
      const found = credentials?.get(credential);
      const resource = found && envoyCredentialSecret(name, found, caOnly);
      if (resource !== undefined) out.push(resource);
    }
    return out;
  };
  // One version per change, whatever the number of streams: subscribed before any stream's listener runs.
  let version = 0;
  const unsubscribeVersion = [secrets.onChange(() => version++), credentials?.onChange(() => version++)];
  /** The `resource_name` label of `name`: itself when the agent serves it now, else the one shared label. */
  const resourceLabel = (name: string): string =>
    name === WORKLOAD_SECRET || name === ROOT_SECRET ||
      credentials?.get(credentialOfSdsName(name).credential) !== undefined
      ? name
      : OTHER_RESOURCE_LABEL;
  /** Counts `counter` once for each distinct label of `names`. */
  const countByName = (counter: string, names: readonly string[]) => {
    for (const label of new Set(names.map(resourceLabel))) {
      metrics?.counter(counter).inc({ resource_name: label });
    }
  };
  // A proxy that rejects or garbles every request costs one line of each kind a period, not one per request.
  const logLimiter = new PeerLogLimiter(PEER_LOG_PERIOD_MS, () => timers.now());
  const streams = new Set<StreamState>();
  const ports = proxySendPorts(options.timers, options.sendTimeoutMs);
  let streamsOpened = 0;
  const implementation = {
    StreamSecrets(call: grpc.ServerDuplexStream<Buffer, Buffer>) {
      let names: string[] = [];
      let nonce = 0;
      /** The nonce of the latest push; undefined before the first. */
      let latestNonce: string | undefined;
      const port = ports.open(call, `sds-${++streamsOpened}`, (error) => {
        log.warn("ending an SDS stream whose proxy does not read its secrets", { error: error.message });
        port.close(grpc.status.DEADLINE_EXCEEDED, "Timed out sending a secret");
      });
      const state: StreamState = { close: () => port.close() };
      streams.add(state);
      metrics?.gauge("total_active_connections").inc();
      const send = () => {
        const resources = resourcesFor(names);
        if (resources.length === 0) return;
        const wanted = resources.map((r) => r.name as string);
        const versionInfo = String(version);
        latestNonce = String(++nonce);
        const response = frameDiscoveryResponse({
          version_info: versionInfo,
          type_url: TYPE_URL.secret,
          nonce: latestNonce,
          resources: resources.map(encodeSecretAny),
        });
        port.send(response, TYPE_URL.secret).catch((error: Error) => {
          if (error instanceof StreamClosedError) return;
          countByName("total_push_errors", wanted);
          log.warn("SDS push failed", { names: wanted, error: error.message });
        });
        state.unacked = { version: versionInfo, since: timers.now() };
        metrics?.counter("total_pushes").inc();
      };
      const unsubscribeWorkload = secrets.onChange(() => {
        if (names.includes(WORKLOAD_SECRET) || names.includes(ROOT_SECRET)) send();
      });
      const unsubscribeCredentials = credentials?.onChange((changed) => {
        if (names.some((n) => credentialOfSdsName(n).credential === changed)) send();
      });
      call.on("data", (data: Buffer) => {
        let request;
        try {
          request = readDiscoveryRequest(data);
        } catch (error) {
          const message = `The SDS request is not a DiscoveryRequest: ${(error as Error).message}`;
          logLimiter.log(
            "malformed",
            (passedOver) =>
              log.warn("SDS request is not a DiscoveryRequest; ending the stream", {
                error: (error as Error).message,
                passedOver,
              }),
          );
          port.close(grpc.status.INVALID_ARGUMENT, message);
          return;
        }
        // Each name once: a secret is sent once per name kept, so a repeated name would make a response
        // a secret long for every repetition, hundreds of times the request's size.
        const asked = [...new Set(request.resourceNames)].sort();
        switch (replyKind(latestNonce, request.responseNonce, request.errorDetail !== undefined)) {
          case "nack":
            // The proxy keeps its last good secret; the next change is pushed as usual.
            countByName("total_secret_update_failures", names);
            logLimiter.log("nack", (passedOver) =>
              log.warn("proxy rejected a secret", {
                names: names.slice(0, LOGGED_NAMES).map((name) => excerpt(name)),
                nameCount: names.length,
                detail: excerpt(request.errorDetail?.message ?? ""),
                passedOver,
              }));
            return;
          case "stale":
            log.debug("ignoring an SDS request with a stale nonce", {
              nonce: excerpt(request.responseNonce),
            });
            return;
          case "ack":
            state.unacked = undefined;
            if (sameNames(asked, names)) return;
            break;
        }
        names = asked;
        send();
      });
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        port.peerGone();
        unsubscribeWorkload();
        unsubscribeCredentials?.();
        streams.delete(state);
        metrics?.gauge("total_active_connections").dec();
      };
      call.on("end", () => {
        finish();
        port.close();
      });
      call.on("error", finish);
      call.on("cancelled", finish);
      call.on("close", finish);
    },
  };
  const server = await startGrpcServer({
    name: "SDS",
    listen: { unix: options.socket, flag: "the SDS socket" },
    services: [{ definition: SDS_SERVICE_DEFINITION, implementation: implementation as never }],
    logger: log,
  });
  const recycleMs = options.staleRecycleMs;
  let recycler: unknown;
  const recycle = (periodMs: number) => {
    const now = timers.now();
    for (const stream of streams) {
      if (stream.unacked === undefined || now - stream.unacked.since < periodMs) continue;
      metrics?.counter("total_stale_connections").inc();
      log.warn("closing an SDS stream that never acknowledged its secret", {
        version: stream.unacked.version,
        sinceMs: now - stream.unacked.since,
      });
      stream.unacked = undefined;
      stream.close();
    }
    recycler = timers.setTimeout(() => recycle(periodMs), periodMs);
  };
  if (recycleMs !== undefined && recycleMs > 0) {
    recycler = timers.setTimeout(() => recycle(recycleMs), recycleMs);
  }
  return {
    ...server,
    close: async (graceMs?: number) => {
      timers.clearTimeout(recycler);
      for (const unsubscribe of unsubscribeVersion) unsubscribe?.();
      await server.close(graceMs);
    },
  };
}
