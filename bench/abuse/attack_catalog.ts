/**
 * The attacks of the abuse benchmark (the findings of #35): for each, the server it needs, its sizes at full
 * scale and at `--small` scale, and how its attacker process is started.
 *
 * @module
 */
import type { AttackOrder } from "./attacker.ts";
import type { WebhookReview } from "./webhook_cpu.ts";

/** Sizes of an attack: flat numbers, overridable from the command line (`--size key=value`). */
export type Sizes = Record<string, number>;

/** Where the attacker aims. */
export interface Target {
  readonly grpcAddr: string;
  readonly secureGRPCAddr: string;
  readonly httpAddr: string;
  readonly httpsAddr: string;
  readonly caDir?: string;
}

/** How to start an attacker: a script under bench/, its arguments and extra permissions. */
export interface Launch {
  readonly script: string;
  readonly args: readonly string[];
  readonly permissions: readonly string[];
}

/** One attack. */
export interface Attack {
  /** `family` or `family:variant`; `--attack family` selects every variant. */
  readonly name: string;
  /** The finding of #35 it reproduces, in a few words. */
  readonly finding: string;
  /** Services in the mesh the server serves. */
  readonly services: (sizes: Sizes) => number;
  /** The server's open-file limit, when the attack needs it lowered. */
  readonly fdLimit?: number;
  /** The server needs a plugged-in CA (`ROOT_CA_DIR`) and the attacker its files. */
  readonly needsCa?: boolean;
  /** The server needs the injector's files, so that it serves `/inject`. */
  readonly needsInjector?: boolean;
  readonly full: Sizes;
  readonly small: Sizes;
  /**
   * The most log lines the server may write while the attack runs, when what the attack tests is the log: each
   * refusal counted, logged once per peer (or kind) an interval.
   */
  readonly maxLogLines?: number;
  /** The most the attack may take, in seconds, before the harness ends it. */
  readonly timeoutS: (sizes: Sizes) => number;
  readonly launch: (target: Target, sizes: Sizes) => Launch;
}

const MIB = 1024 * 1024;
const ATTACKER = "abuse/attacker.ts";
// The webhook's certificate comes from the server's own CA; only loopback is ever attacked.
const ATTACKER_PERMISSIONS = ["--unsafely-ignore-certificate-errors=127.0.0.1"];
const SMALL_MESH = () => 10;

function attacker(target: Target, order: Record<string, unknown>): Launch {
  const { grpcAddr, secureGRPCAddr, httpAddr, httpsAddr, caDir } = target;
  const full = { grpcAddr, secureGRPCAddr, httpAddr, httpsAddr, caDir, ...order } as AttackOrder;
  return { script: ATTACKER, args: [JSON.stringify(full)], permissions: ATTACKER_PERMISSIONS };
}

/** A pipeline flood: `who` pipelining requests they never read, over TLS (`tls` 1) or not (0). */
function pipelineFlood(name: string, tls: 0 | 1, who: string): Attack {
  return {
    name,
    finding: `CPU and memory per caller: ${who} pipelining requests they never read`,
    services: SMALL_MESH,
    full: { connections: 64, holdS: 60 },
    small: { connections: 64, holdS: 20 },
    timeoutS: (s) => s.holdS + 30,
    launch: (t, s) =>
      attacker(t, { kind: "pipeline-flood", sizes: { connections: s.connections, holdS: s.holdS, tls } }),
  };
}

/**
 * A variant of the connection flood: one client opening and closing connections as fast as it can, `where` says
 * which port and what each connection sends.
 */
function handshakeFlood(variant: string, what: string, where: { port: number; preface: number }): Attack {
  return {
    name: `handshake-flood:${variant}`,
    finding: `CPU and memory per caller: ${what}, as fast as one client can open them`,
    services: SMALL_MESH,
    full: { workers: 50, holdS: 60, ...where },
    small: { workers: 20, holdS: 20, ...where },
    timeoutS: (s) => s.holdS + 30,
    launch: (t, sizes) => attacker(t, { kind: "handshake-flood", sizes }),
  };
}

/**
 * A variant of the webhook CPU attack: well-formed admission requests just under the body cap, each costly to
 * judge, `inFlight` at a time from one client, each sent again once answered.
 */
function webhookCpu(review: WebhookReview, what: string, bodyBytes = Math.floor(2.9 * MIB)): Attack {
  return {
    name: `webhook-cpu:${review}`,
    finding: `CPU per caller: ${what}, a few at a time from one client`,
    services: SMALL_MESH,
    needsInjector: review !== "validate" && review !== "hosts",
    full: { bodyBytes, inFlight: 4, holdS: 120 },
    small: { bodyBytes, inFlight: 4, holdS: 30 },
    timeoutS: (s) => s.holdS + 60,
    launch: (t, s) => attacker(t, { kind: "webhook-cpu", sizes: { ...s, review } }),
  };
}

/** Every attack, in the order `--attack all` runs them. */
export const ATTACKS: readonly Attack[] = [
  {
    name: "delta-names",
    finding: "1: delta subscriptions of 8 KiB EDS names, 450 a request",
    services: SMALL_MESH,
    full: { streams: 4, nameBytes: 8192, namesPerRequest: 450, requests: 100, holdS: 20 },
    small: { streams: 4, nameBytes: 8192, namesPerRequest: 450, requests: 4, holdS: 10 },
    timeoutS: (s) => 60 + s.requests * 6 + s.holdS,
    launch: (t, sizes) => attacker(t, { kind: "delta-names", sizes }),
  },
  {
    name: "delta-names:many",
    finding: "1: delta subscriptions of up to a million short names a stream",
    services: SMALL_MESH,
    full: { streams: 4, nameBytes: 0, namesPerRequest: 10_000, requests: 100, holdS: 20 },
    small: { streams: 4, nameBytes: 0, namesPerRequest: 10_000, requests: 5, holdS: 10 },
    timeoutS: (s) => 60 + s.requests * 6 + s.holdS,
    launch: (t, sizes) => attacker(t, { kind: "delta-names", sizes }),
  },
  {
    name: "stream-flood",
    finding: "2: 30 connections x 100 ADS streams on a 3,000-service mesh",
    services: (s) => s.services,
    full: { services: 3000, connections: 30, streams: 100, holdS: 120 },
    small: { services: 300, connections: 5, streams: 40, holdS: 30 },
    timeoutS: (s) => s.holdS,
    launch: (t, s) => ({
      script: "../tests/helpers/leaving_proxies.ts",
      args: [t.grpcAddr, "stay", String(s.connections), String(s.streams), "0"],
      permissions: [],
    }),
  },
  {
    name: "stream-churn",
    finding: "2: ADS streams on a 3,000-service mesh cancelled with their answer queued, round after round",
    services: (s) => s.services,
    full: { services: 3000, connections: 100, streams: 5, rounds: 20, holdMs: 2000, windowBytes: 16_384 },
    small: { services: 300, connections: 10, streams: 5, rounds: 3, holdMs: 1000, windowBytes: 16_384 },
    timeoutS: (s) => 60 + s.rounds * (2 * s.holdMs / 1000 + 2),
    launch: (t, sizes) => attacker(t, { kind: "stream-churn", sizes }),
  },
  {
    name: "stream-churn:connections",
    finding: "2: proxies that come and go: new connections every round, their streams cancelled, then closed",
    services: (s) => s.services,
    full: {
      services: 3000,
      connections: 50,
      streams: 1,
      rounds: 100,
      holdMs: 1000,
      windowBytes: 16_384,
      freshConnections: 1,
    },
    small: {
      services: 300,
      connections: 10,
      streams: 1,
      rounds: 3,
      holdMs: 1000,
      windowBytes: 16_384,
      freshConnections: 1,
    },
    timeoutS: (s) => 60 + s.rounds * (2 * s.holdMs / 1000 + 2),
    launch: (t, sizes) => attacker(t, { kind: "stream-churn", sizes }),
  },
  {
    name: "webhook-bodies",
    finding: "3: HTTP/2 streams of 3 MiB bodies to /validate",
    services: SMALL_MESH,
    full: { connections: 5, streams: 200, bodyBytes: 3 * MIB, holdS: 120 },
    small: { connections: 2, streams: 20, bodyBytes: 3 * MIB, holdS: 40 },
    timeoutS: (s) => s.holdS + 30,
    launch: (t, s) => attacker(t, { kind: "webhook-bodies", sizes: { ...s, http1: false } }),
  },
  {
    name: "webhook-bodies:h1",
    finding: "3: HTTP/1.1 connections each posting a 3 MiB body to /validate",
    services: SMALL_MESH,
    full: { connections: 200, bodyBytes: 3 * MIB, holdS: 120 },
    small: { connections: 40, bodyBytes: 3 * MIB, holdS: 40 },
    timeoutS: (s) => s.holdS + 30,
    launch: (t, s) => attacker(t, { kind: "webhook-bodies", sizes: { ...s, streams: 1, http1: true } }),
  },
  {
    name: "slot-flood",
    finding: "4: keep-alive connections to the debug port trickling a second request",
    services: SMALL_MESH,
    full: { connections: 1030, everyMs: 5_000, holdS: 120 },
    small: { connections: 1030, everyMs: 5_000, holdS: 30 },
    timeoutS: (s) => s.holdS + 60,
    launch: (t, s) => attacker(t, { kind: "slot-flood", sizes: { ...s, tls: false } }),
  },
  {
    name: "slot-flood:tls",
    finding: "4: TLS connections to the webhook port asking every 45 s",
    services: SMALL_MESH,
    full: { connections: 1024, everyMs: 45_000, holdS: 120 },
    small: { connections: 1024, everyMs: 10_000, holdS: 30 },
    timeoutS: (s) => s.holdS + 90,
    launch: (t, s) => attacker(t, { kind: "slot-flood", sizes: { ...s, tls: true } }),
  },
  pipelineFlood("pipeline-flood", 0, "connections to the debug port"),
  pipelineFlood("pipeline-flood:tls", 1, "TLS connections to the webhook port"),
  {
    name: "fd-exhaust",
    finding: "5: silent connections to 15010 and 8080 past `ulimit -n 1024`",
    services: SMALL_MESH,
    fdLimit: 1024,
    full: { connections: 1100, holdS: 60 },
    small: { connections: 1100, holdS: 20 },
    timeoutS: (s) => s.holdS + 90,
    launch: (t, sizes) => attacker(t, { kind: "half-open", sizes }),
  },
  {
    name: "csr",
    finding: "6: 527 KiB CSRs, then 2,000 valid CSRs from one identity",
    services: SMALL_MESH,
    needsCa: true,
    full: { large: 100, largeBytes: 527 * 1024, valid: 2000, concurrency: 50 },
    small: { large: 10, largeBytes: 527 * 1024, valid: 200, concurrency: 50 },
    timeoutS: (s) => 60 + s.large * 2 + s.valid / 10,
    launch: (t, sizes) => attacker(t, { kind: "csr", sizes }),
  },
  {
    name: "nack-flood",
    finding: "7: NACKs with a different error text each",
    services: SMALL_MESH,
    full: { nacks: 20_000, holdS: 10 },
    small: { nacks: 2_000, holdS: 5 },
    timeoutS: (s) => 60 + s.nacks / 100 + s.holdS,
    launch: (t, sizes) => attacker(t, { kind: "nack-flood", sizes }),
  },
  {
    name: "bad-requests",
    finding: "7, the same for refusals: streams, requests and webhook bodies refused one after another",
    services: SMALL_MESH,
    full: { refusedStreams: 5_000, untyped: 20_000, webhookPosts: 5_000 },
    small: { refusedStreams: 500, untyped: 2_000, webhookPosts: 500 },
    timeoutS: (s) => 60 + (s.refusedStreams + s.untyped / 10 + s.webhookPosts) / 50,
    // One line per kind of refusal (refused stream, untyped request, webhook status) and a few about the push
    // watcher's connection, whatever the sizes.
    maxLogLines: 20,
    launch: (t, sizes) => attacker(t, { kind: "bad-requests", sizes }),
  },
  {
    name: "shape-flood",
    finding: "CPU per caller: Envoy sidecars of a shape each, full view of the mesh, from one client",
    services: (s) => s.services,
    full: { services: 1000, connections: 10, streams: 100, holdS: 60 },
    small: { services: 300, connections: 2, streams: 50, holdS: 20 },
    timeoutS: (s) => s.holdS + 30,
    launch: (t, sizes) => attacker(t, { kind: "shape-flood", sizes }),
  },
  handshakeFlood("tls", "TLS handshakes to the secure xDS port", { port: 0, preface: 0 }),
  handshakeFlood("webhook", "TLS handshakes to the webhook port", { port: 1, preface: 0 }),
  handshakeFlood(
    "silent",
    "TCP connections to the plain xDS port closed without a byte, as a port scan or a TCP health check",
    { port: 2, preface: 0 },
  ),
  handshakeFlood("preface", "TCP connections to the plain xDS port closed after the HTTP/2 preface", {
    port: 2,
    preface: 1,
  }),
  webhookCpu("inject", "2.9 MiB Pods of about 200,000 annotations each to /inject"),
  webhookCpu("validate", "2.9 MiB VirtualServices of about 14,000 regex routes each to /validate"),
  webhookCpu("hosts", "256 KiB VirtualServices naming one host about 7,000 times to /validate", 256 * 1024),
  webhookCpu(
    "quantity",
    "60 KB Pods whose cpu limit is 0. and 60,000 zeros then a one to /inject",
    60 * 1024,
  ),
  webhookCpu("containers", "2.9 MiB Pods of about 100,000 containers each to /inject"),
];

/** The attacks `selector` names: `all`, a family (every variant) or one `family:variant`. */
export function selectAttacks(selector: readonly string[]): Attack[] {
  if (selector.length === 0 || selector.includes("all")) return [...ATTACKS];
  return selector.map((wanted) => {
    const found = ATTACKS.filter((a) => a.name === wanted || a.name.split(":")[0] === wanted);
    if (found.length === 0) {
      throw new RangeError(
        `Unknown --attack "${wanted}": expected all or one of ${ATTACKS.map((a) => a.name).join(", ")}`,
      );
    }
    return found;
  }).flat();
}
