/**
 * One simulated proxyless gRPC proxy: an ADS stream on its own HTTP/2 connection that watches CDS, EDS
 * (the EDS clusters CDS names, as Envoy and gRPC ask for them), LDS and RDS (the listeners LDS names), ACKs every response at once, and records
 * when each response arrived. Responses are read at the wire level only (see `wire_reader.ts`).
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import { loadEnvoySchema } from "../proto/envoy_schema.ts";
import { TYPE_URL } from "../proto/type_urls.ts";
import { lenFieldSize, utf8Bytes, WireWriter } from "../proto/_wire.ts";
import { ADS_SERVICE_DEFINITION } from "../proto/ads_service.ts";
import { epochMs } from "./mesh_fixture.ts";
import { readEdsServiceNames, readResourceNames, readResponseHead } from "./wire_reader.ts";
import { memoByIdentity } from "../shared/memo/memo_by_identity.ts";

/** The four types a proxy watches, in the order the server pushes them. */
export const WATCHED_TYPES = [
  TYPE_URL.cluster,
  TYPE_URL.endpoint,
  TYPE_URL.listener,
  TYPE_URL.route,
] as const;

/** Short names of the watched types, for reports. */
export const SHORT_TYPE: Readonly<Record<string, string>> = {
  [TYPE_URL.cluster]: "CDS",
  [TYPE_URL.endpoint]: "EDS",
  [TYPE_URL.listener]: "LDS",
  [TYPE_URL.route]: "RDS",
};

/** What a proxy subscribes to: explicit names, or every resource (undefined) for CDS and LDS. */
export interface Subscription {
  readonly listeners?: readonly string[];
  readonly clusters?: readonly string[];
}

/** Shared by every proxy of a load process. */
export interface ProxyContext {
  readonly delta: boolean;
  /** An Envoy sidecar: its routes are named by the port of each HTTP listener `0.0.0.0_<port>`. */
  readonly envoy?: boolean;
  readonly subscription: Subscription;
  /**
   * The HTTP/2 receive window of each connection and stream, in bytes; grpc-js's default (64 KiB) when absent.
   * Envoy's default is 256 MiB; gRPC's own clients grow theirs with the bandwidth-delay product.
   */
  readonly window?: number;
  /**
   * Names read from a response, by type, version (delta: nonce) and size: equal for equal shapes, so a
   * thousand proxies given the same response read its names once (delta: only a first answer).
   */
  readonly nameMemo: Map<string, readonly string[]>;
}

/** One response as the proxy saw it. */
export interface Arrival {
  readonly typeUrl: string;
  /** When it was read and ACKed (ms since the epoch). */
  readonly at: number;
  readonly version: string;
  readonly resources: number;
  readonly bytes: number;
}

/** Retries of a stream that fails before its first configuration, and the first backoff. */
const MAX_RETRIES = 6;
const RETRY_BASE_MS = 250;

const ADS_CLIENT = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");

let requestTypes: { sotw: protobuf.Type; delta: protobuf.Type } | undefined;

/** `resource_names` (field 3 of DiscoveryRequest) framed once per list. */
const namesRun = memoByIdentity((names: readonly string[]): Uint8Array => {
  const encoded = names.map(utf8Bytes);
  const w = new WireWriter(encoded.reduce((size, bytes) => size + lenFieldSize(3, bytes.length), 0));
  for (const bytes of encoded) w.lenField(3, bytes);
  return w.finish();
});

function requestType(delta: boolean): protobuf.Type {
  if (requestTypes === undefined) {
    const schema = loadEnvoySchema();
    requestTypes = {
      sotw: schema.lookupType("envoy.service.discovery.v3.DiscoveryRequest"),
      delta: schema.lookupType("envoy.service.discovery.v3.DeltaDiscoveryRequest"),
    };
  }
  return delta ? requestTypes.delta : requestTypes.sotw;
}

/** Per-type state of one stream. */
interface TypeState {
  /** Names subscribed (state of the world: the names of the latest request; delta: the subscribed set). */
  names: readonly string[] | undefined;
  nonce: string;
  version: string;
  /**
   * Delta: resource names the proxy holds, as the shared list of its first answer until a later response
   * changes them (a set is made per proxy only then).
   */
  held: Set<string> | readonly string[];
  /** When the latest request that changed the subscription was written. */
  requestedAt: number;
  /** When the first response after that request arrived; 0 while waiting. */
  answeredAt: number;
}

/** One simulated proxy. */
export class SimProxy {
  #client: grpc.Client | undefined;
  #call: grpc.ClientDuplexStream<Uint8Array, Uint8Array> | undefined;
  #types = new Map<string, TypeState>();
  #sentNode = false;
  /** Every response since the last `startRecording`. */
  arrivals: Arrival[] = [];
  /** When the current stream was opened. */
  openedAt = 0;
  /** When this stream first held a full configuration; 0 until then. */
  fullAt = 0;
  /** How the latest stream ended, if it did. */
  ended: { code: number; details: string } | undefined;
  /** Streams re-opened after UNAVAILABLE since the latest `open`. */
  retries = 0;
  /** The status details of each retried stream, for the report. */
  retryReasons: string[] = [];
  /** The latest raw response per type (kept for capture). */
  readonly latest = new Map<string, Uint8Array>();
  readonly #keepLatest: boolean;

  constructor(
    readonly index: number,
    readonly addr: string,
    readonly node: Record<string, unknown>,
    readonly ctx: ProxyContext,
    keepLatest = false,
  ) {
    this.#keepLatest = keepLatest;
  }

  /** Opens a new connection and stream and sends the first CDS and LDS requests. */
  open(): void {
    this.retries = 0;
    this.retryReasons = [];
    this.#reopen();
  }

  #reopen(): void {
    this.close();
    this.#types = new Map();
    this.#sentNode = false;
    this.fullAt = 0;
    this.ended = undefined;
    this.openedAt = epochMs();
    // A local subchannel pool gives every proxy its own HTTP/2 connection, as separate workloads have.
    const client = new ADS_CLIENT(this.addr, grpc.credentials.createInsecure(), {
      "grpc.max_receive_message_length": -1,
      "grpc.use_local_subchannel_pool": 1,
      ...(this.ctx.window === undefined ? {} : { "grpc-node.flow_control_window": this.ctx.window }),
    });
    const method = this.ctx.delta ? "DeltaAggregatedResources" : "StreamAggregatedResources";
    // deno-lint-ignore no-explicit-any
    const call = (client as any)[method]() as grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
    this.#client = client;
    this.#call = call;
    call.on("data", (bytes: Uint8Array) => this.#receive(bytes));
    call.on("status", (s: grpc.StatusObject) => {
      if (this.#call !== call) return;
      // A connection refused or reset before any configuration arrived is retried with jittered backoff, as
      // gRPC and Envoy clients do; anything else ends the proxy's run.
      if (s.code === grpc.status.UNAVAILABLE && this.fullAt === 0 && this.retries < MAX_RETRIES) {
        const delayMs = RETRY_BASE_MS * 2 ** this.retries * (0.5 + Math.random());
        this.retries++;
        this.retryReasons.push(s.details);
        setTimeout(() => {
          if (this.#call === call) this.#reopen();
        }, delayMs);
        return;
      }
      this.ended = { code: s.code, details: s.details };
    });
    call.on("error", () => {});
    const { clusters, listeners } = this.ctx.subscription;
    this.#subscribe(TYPE_URL.cluster, clusters === undefined ? [] : [...clusters]);
    this.#subscribe(TYPE_URL.listener, listeners === undefined ? [] : [...listeners]);
  }

  /** Ends the stream and the connection. */
  close(): void {
    const call = this.#call;
    const client = this.#client;
    this.#call = undefined;
    this.#client = undefined;
    if (call !== undefined) {
      call.end();
      call.cancel();
    }
    client?.close();
  }

  /** Forgets recorded arrivals; later ones are recorded from now on. */
  startRecording(): void {
    this.arrivals = [];
  }

  /** True while the stream is open and has not ended. */
  get connected(): boolean {
    return this.#call !== undefined && this.ended === undefined;
  }

  /**
   * Writes a request; `names` are its field 3 (`resource_names`, delta: `resource_names_subscribe`), written
   * last as one run of bytes framed once per list: 1000 proxies ACKing or subscribing to 3000 names each
   * would otherwise make this one load process, not the server, the slowest part of every push.
   */
  #write(request: Record<string, unknown>, names?: readonly string[]): void {
    const type = requestType(this.ctx.delta);
    const message = this.#sentNode ? request : { node: this.node, ...request };
    this.#sentNode = true;
    const head = type.encode(type.fromObject(message)).finish();
    if (names === undefined || names.length === 0) return void this.#call?.write(head);
    const run = namesRun(names);
    this.#call?.write(new WireWriter(head.length + run.length).raw(head).raw(run).finish());
  }

  /** Starts or changes the watch of a type; `[]` is a wildcard for CDS and LDS. */
  #subscribe(typeUrl: string, names: readonly string[]): void {
    const state = this.#types.get(typeUrl);
    const now = epochMs();
    if (this.ctx.delta) {
      // A first subscription keeps the list as given, so proxies handed the same list frame it once.
      const before = new Set(state?.names ?? []);
      const after = before.size === 0 ? undefined : new Set(names);
      const subscribe = after === undefined ? names : names.filter((n) => !before.has(n));
      const unsubscribe = after === undefined ? [] : [...before].filter((n) => !after.has(n));
      if (state !== undefined && subscribe.length === 0 && unsubscribe.length === 0) return;
      this.#write({ type_url: typeUrl, resource_names_unsubscribe: unsubscribe }, subscribe);
      if (state === undefined) {
        this.#types.set(typeUrl, {
          names,
          nonce: "",
          version: "",
          held: [],
          requestedAt: now,
          answeredAt: 0,
        });
      } else {
        state.names = names;
        // Only new names are answered; a pure unsubscription gets no response.
        if (subscribe.length > 0) {
          state.requestedAt = now;
          state.answeredAt = 0;
        }
      }
      return;
    }
    if (state !== undefined && sameNames(state.names ?? [], names)) return;
    this.#write(
      { type_url: typeUrl, version_info: state?.version ?? "", response_nonce: state?.nonce ?? "" },
      names,
    );
    if (state === undefined) {
      this.#types.set(typeUrl, {
        names,
        nonce: "",
        version: "",
        held: [],
        requestedAt: now,
        answeredAt: 0,
      });
    } else {
      state.names = names;
      state.requestedAt = now;
      state.answeredAt = 0;
    }
  }

  #receive(bytes: Uint8Array): void {
    const head = readResponseHead(bytes, this.ctx.delta);
    const state = this.#types.get(head.typeUrl);
    if (state === undefined) return;
    state.nonce = head.nonce;
    state.version = head.version;
    // ACK first: the server's view of convergence is the ACK.
    if (this.ctx.delta) this.#write({ type_url: head.typeUrl, response_nonce: head.nonce });
    else {
      this.#write(
        { type_url: head.typeUrl, version_info: head.version, response_nonce: head.nonce },
        state.names,
      );
    }
    const at = epochMs();
    if (state.answeredAt === 0) state.answeredAt = at;
    this.arrivals.push({
      typeUrl: head.typeUrl,
      at,
      version: head.version,
      resources: head.resourceCount,
      bytes: bytes.length,
    });
    if (this.#keepLatest) this.latest.set(head.typeUrl, bytes);
    if (head.typeUrl === TYPE_URL.cluster && this.ctx.subscription.clusters === undefined) {
      this.#follow(state, bytes, head, TYPE_URL.endpoint, undefined, readEdsServiceNames);
    } else if (head.typeUrl === TYPE_URL.cluster) {
      this.#subscribe(TYPE_URL.endpoint, [...this.ctx.subscription.clusters!]);
    } else if (head.typeUrl === TYPE_URL.listener) {
      this.#follow(state, bytes, head, TYPE_URL.route, this.ctx.envoy ? envoyRouteNames : undefined);
    }
    if (this.fullAt === 0 && this.#hasFullConfig()) this.fullAt = at;
  }

  /** Subscribes `dependent` to the names a CDS or LDS response holds (routes are named as listeners). */
  #follow(
    state: TypeState,
    bytes: Uint8Array,
    head: ReturnType<typeof readResponseHead>,
    dependent: string,
    // The same list for every proxy given the same response, so per-list work (framing ACKs) is shared.
    rename: (names: readonly string[]) => readonly string[] = (names) => names,
    read: (bytes: Uint8Array, delta: boolean) => string[] = readResourceNames,
  ): void {
    if (this.ctx.delta) {
      if (Array.isArray(state.held) && state.held.length === 0 && head.removed.length === 0) {
        // A first answer: the names it holds are all the proxy holds, the same list as every proxy's.
        state.held = this.#namesOf(bytes, head, read);
      } else {
        // A removed cluster's EDS name is taken to be its own: this server names them alike.
        const held = new Set(state.held);
        for (const name of read(bytes, true)) held.add(name);
        for (const name of head.removed) held.delete(name);
        state.held = held;
      }
      this.#subscribe(dependent, rename(Array.isArray(state.held) ? state.held : [...state.held]));
      return;
    }
    this.#subscribe(dependent, rename(this.#namesOf(bytes, head, read)));
  }

  /**
   * The names of the resources of a response, read once per distinct response of the load process. A
   * response's version is the push's, the same for every shape, so its nonce tells responses apart: the
   * server gives one framing of a response to every proxy it shares it with, and a fresh nonce to any other.
   */
  #namesOf(
    bytes: Uint8Array,
    head: ReturnType<typeof readResponseHead>,
    read: (bytes: Uint8Array, delta: boolean) => string[],
  ): readonly string[] {
    // A SotW response's version is the push's too: two shapes' responses of one length (namespaces whose
    // service names have as many digits) once shared a memo entry, and proxies of one subscribed the other's
    // EDS names, asking the server for them after every CDS.
    const key = `${this.ctx.delta ? "delta " : ""}${head.typeUrl} ${head.nonce} ${bytes.length}`;
    let names = this.ctx.nameMemo.get(key);
    if (names === undefined) {
      names = read(bytes, this.ctx.delta);
      this.ctx.nameMemo.set(key, names);
    }
    return names;
  }

  /** Every watched type answered since its latest subscription change. */
  #hasFullConfig(): boolean {
    return WATCHED_TYPES.every((t) => {
      const s = this.#types.get(t);
      return s !== undefined && s.answeredAt > 0;
    });
  }
}

/** The route names an Envoy sidecar asks for: the port of each outbound HTTP listener `0.0.0.0_<port>`. */
function envoyRouteNames(listeners: readonly string[]): string[] {
  return listeners.filter((n) => n.startsWith("0.0.0.0_")).map((n) => n.slice("0.0.0.0_".length));
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((n) => set.has(n));
}
