/**
 * The agent's DNS proxy, where `mesh-agent mesh-iptables` sends the workload's DNS when `DNS_CAPTURE` is on:
 * UDP and TCP on port 15053 of 127.0.0.1 and ::1. A query for a host of the mesh is answered from the name
 * table the discovery server sent; any other query goes to the resolv.conf servers in turn, each with Istio's
 * deadline, on the protocol it came in on, and the first reply is relayed as it came (over UDP, when longer than
 * the client takes, as Istio cuts it: TC set, no record).
 *
 * As in Istio 1.9: the table answers A and AAAA only (other types of a known name go upstream), answers are
 * authoritative with a 30 s TTL, a query before the first table or without a question gets SERVFAIL, and a
 * query no upstream answers gets SERVFAIL once the last deadline passed. Unlike miekg/dns, which answers
 * unreadable messages with FORMERR, an unreadable packet is dropped unanswered and counted: the proxy never
 * replies to bytes it cannot read. A table replaces the last one whole, between two queries.
 *
 * @module
 */
import type { AddressInfo } from "node:net";
import dgram from "node:dgram";
import net from "node:net";
import type { NameTable } from "@mesh/proto/name_table";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import {
  decodeDnsMessage,
  DNS_FLAG,
  DNS_MIN_UDP_BYTES,
  DNS_RCODE,
  DnsFormatError,
  type DnsMessage,
  type DnsRecord,
  ednsUdpSize,
  encodeRecords,
  firstQuestionEnd,
} from "./dns_message.ts";
import { type LookupScope, LookupTable } from "./lookup_table.ts";
import { serveDnsTcpConnection } from "./tcp_connection.ts";
import { type DnsProtocol, exchange } from "./upstream_exchange.ts";
import { PeerLogLimiter } from "@mesh/shared/log/peer_log_limiter";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";

const HEADER_BYTES = 12;

/** The port Istio's agent serves DNS on, and `mesh-iptables` redirects port 53 to. */
export const DNS_PROXY_PORT = 15053;

/** The addresses it listens on. */
export const DNS_PROXY_HOSTS: readonly string[] = ["127.0.0.1", "::1"];

/** Istio's deadline of one upstream exchange (miekg/dns's default). */
export const UPSTREAM_TIMEOUT_MS = 2_000;

/** Bounds of what clients can make the proxy hold. */
export const DNS_PROXY_LIMITS = {
  /** Queries waiting on an upstream at once; past it a query not in the table gets SERVFAIL at once. */
  maxUpstreamInFlight: 1_024,
  /** Open TCP connections; a further one is closed on accept. */
  maxTcpConnections: 256,
  /**
   * A TCP connection owed no reply must bring its next query whole within this long, or is closed (miekg/dns's
   * idle timeout); bytes trickling in do not extend it.
   */
  tcpIdleMs: 8_000,
  /** At most one warning about unreadable packets this often; the rest are counted. */
  malformedLogIntervalMs: 60_000,
} as const;

/**
 * The largest query datagram read whole: EDNS's usual ceiling, eight times a classic query's 512 bytes. In
 * Deno's `node:dgram` the receive buffer size is the buffer allocated for every datagram (64 KiB unless set),
 * not the kernel's socket buffer; a longer datagram is cut to this size and fails to decode (dropped, counted).
 */
export const DNS_UDP_QUERY_BYTES = 4_096;

/** How often a port-0 start picks a fresh port when another host's socket found the first taken. */
const PICK_ATTEMPTS = 20;

/** Options of the DNS proxy. */
export interface DnsProxyOptions {
  /** Where the workload lives, for short names and the search-domain forms. */
  readonly scope: LookupScope;
  /** `host:port` of each upstream server, tried in order. */
  readonly upstreams: readonly string[];
  /** Port on every host of `hosts`; 0 lets the first pick one and the others follow. */
  readonly port?: number;
  readonly hosts?: readonly string[];
  readonly upstreamTimeoutMs?: number;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Milliseconds now; injected for the upstream duration and the log pacing. */
  readonly now?: () => number;
  /** The timers of TCP connections' deadlines; the runtime's by default. */
  readonly timers?: Timers;
}

/** A running DNS proxy. */
export class DnsProxy {
  readonly #options: DnsProxyOptions;
  readonly #now: () => number;
  readonly #timers: Timers;
  #table: LookupTable | undefined;
  readonly #udp: dgram.Socket[] = [];
  readonly #tcp: net.Server[] = [];
  readonly #connections = new Set<net.Socket>();
  #inFlight = 0;
  /** The encoded records of each answer the table gave; an answer's records belong to one table and one name. */
  #sections = new WeakMap<readonly DnsRecord[], Uint8Array>();
  #port = 0;
  readonly #malformedLog: PeerLogLimiter;

  /** A proxy that answers nothing from a table until `updateTable`; call `start` to listen. */
  constructor(options: DnsProxyOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#timers = options.timers ?? systemTimers;
    this.#malformedLog = new PeerLogLimiter(DNS_PROXY_LIMITS.malformedLogIntervalMs, this.#now);
  }

  /** The port it listens on, once started. */
  get port(): number {
    return this.#port;
  }

  /** Replaces the name table; the next query is answered from it. */
  updateTable(table: NameTable): void {
    this.#table = new LookupTable(table, this.#options.scope);
    this.#options.log.debug("name table updated", { names: this.#table.size });
  }

  /**
   * Listens on every host; a host the machine lacks (no IPv6 loopback) is skipped with a warning.
   *
   * @throws {Error} when a port is taken, naming the address
   */
  async start(): Promise<void> {
    const wanted = this.#options.port ?? DNS_PROXY_PORT;
    // Port 0: the first UDP socket picks a port, and the others may find it taken by someone else's
    // connection; a few fresh picks then find one free on every host.
    for (let attempt = 1;; attempt++) {
      try {
        await this.#listenAll(wanted);
        break;
      } catch (error) {
        await this.close();
        const taken = (error as { cause?: { code?: string } }).cause?.code === "EADDRINUSE";
        if (wanted !== 0 || !taken || attempt === PICK_ATTEMPTS) throw error;
      }
    }
    this.#options.log.info("DNS proxy listening", { port: this.#port, upstreams: this.#options.upstreams });
  }

  async #listenAll(port: number): Promise<void> {
    this.#port = port;
    for (const host of this.#options.hosts ?? DNS_PROXY_HOSTS) {
      try {
        await this.#listen(host);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (host.includes(":") && (code === "EADDRNOTAVAIL" || code === "EAFNOSUPPORT")) {
          this.#options.log.warn("no IPv6 loopback; the DNS proxy listens on IPv4 only", { host });
          continue;
        }
        throw new Error(`Cannot listen for DNS on ${host} port ${this.#port}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
  }

  async #listen(host: string): Promise<void> {
    const udp = dgram.createSocket({
      type: host.includes(":") ? "udp6" : "udp4",
      // Set once bound, and doubled there on Linux as the kernel doubles SO_RCVBUF.
      recvBufferSize: DNS_UDP_QUERY_BYTES / 2,
    });
    await new Promise<void>((resolve, reject) => {
      udp.once("error", reject);
      udp.bind(this.#port, host, () => {
        udp.off("error", reject);
        resolve();
      });
    });
    this.#udp.push(udp);
    if (this.#port === 0) this.#port = udp.address().port;
    udp.on("error", (error) => this.#options.log.warn("DNS UDP socket error", { error: error.message }));
    udp.on("message", (packet, from) => {
      const send = (reply: Uint8Array | undefined) => {
        if (reply === undefined) return;
        // A reply that cannot go (the socket closed meanwhile) is the client's loss alone: it asks again.
        try {
          udp.send(reply, from.port, from.address, (error) => {
            if (error) this.#options.log.debug("cannot send a DNS reply", { error: error.message });
          });
        } catch (error) {
          this.#options.log.debug("cannot send a DNS reply", { error: (error as Error).message });
        }
      };
      // A table answer goes out in the same turn; only forwarding waits.
      const reply = this.#answerSafely(packet, "udp");
      if (reply instanceof Promise) void reply.then(send);
      else send(reply);
    });
    const tcp = net.createServer((socket) => this.#serveTcp(socket));
    await new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen({ port: this.#port, host }, () => {
        tcp.off("error", reject);
        resolve();
      });
    });
    this.#tcp.push(tcp);
    if (this.#port === 0) this.#port = (tcp.address() as AddressInfo).port;
  }

  #serveTcp(socket: net.Socket): void {
    if (this.#connections.size >= DNS_PROXY_LIMITS.maxTcpConnections) {
      socket.destroy();
      return;
    }
    this.#connections.add(socket);
    socket.on("close", () => this.#connections.delete(socket));
    serveDnsTcpConnection(
      socket,
      (query) => this.#answerSafely(query, "tcp"),
      DNS_PROXY_LIMITS.tcpIdleMs,
      this.#timers,
    );
  }

  /** The reply to one packet, or undefined when the packet is dropped. Never rejects. */
  answer(packet: Uint8Array, protocol: DnsProtocol): Promise<Uint8Array | undefined> {
    return Promise.resolve(this.#answerSafely(packet, protocol));
  }

  /** `#answer`, with anything it throws or rejects with counted as an unreadable packet and dropped. */
  #answerSafely(
    packet: Uint8Array,
    protocol: DnsProtocol,
  ): Uint8Array | undefined | Promise<Uint8Array | undefined> {
    const dropped = (error: unknown) => {
      this.#malformed(error instanceof Error ? error : new Error(String(error)), packet.length);
      return undefined;
    };
    try {
      const reply = this.#answer(packet, protocol);
      return reply instanceof Promise ? reply.catch(dropped) : reply;
    } catch (error) {
      return dropped(error);
    }
  }

  /** The reply at once when the table or a refusal gives it, else the forwarded reply. */
  #answer(
    packet: Uint8Array,
    protocol: DnsProtocol,
  ): Uint8Array | undefined | Promise<Uint8Array | undefined> {
    let query: DnsMessage;
    try {
      query = decodeDnsMessage(packet);
      if ((query.flags & DNS_FLAG.qr) !== 0) throw new DnsFormatError("A response, not a query", 2);
    } catch (error) {
      this.#malformed(error as Error, packet.length);
      return undefined;
    }
    const metrics = this.#options.metrics;
    metrics.counter("dns_requests_total").inc();
    const question = query.questions[0];
    if (question === undefined || this.#table === undefined) {
      return replyTo(packet, query, DNS_RCODE.servFail);
    }
    const records = this.#table.lookup(question.type, question.name);
    if (records !== undefined) return this.#tableReply(packet, query, records, protocol);
    metrics.counter("dns_upstream_requests_total").inc();
    if (this.#inFlight >= DNS_PROXY_LIMITS.maxUpstreamInFlight) {
      metrics.counter("dns_upstream_failures_total").inc();
      return replyTo(packet, query, DNS_RCODE.servFail);
    }
    return this.#forward(packet, query, protocol);
  }

  async #forward(packet: Uint8Array, query: DnsMessage, protocol: DnsProtocol): Promise<Uint8Array> {
    const metrics = this.#options.metrics;
    this.#inFlight++;
    const started = this.#now();
    try {
      for (const server of this.#options.upstreams) {
        try {
          const reply = await exchange(
            packet,
            server,
            protocol,
            this.#options.upstreamTimeoutMs ?? UPSTREAM_TIMEOUT_MS,
          );
          return reply.length <= udpLimit(query, protocol) ? reply : cutRelay(packet, query, reply);
        } catch (error) {
          this.#options.log.debug("upstream DNS failure", { server, error: (error as Error).message });
        }
      }
      metrics.counter("dns_upstream_failures_total").inc();
      return replyTo(packet, query, DNS_RCODE.servFail);
    } finally {
      this.#inFlight--;
      metrics.histogram("dns_upstream_request_duration_seconds").observe((this.#now() - started) / 1000);
    }
  }

  /**
   * The table's answer: the query's header and first question as they came (the name's case kept for
   * resolvers that check it), then the records, encoded once per table.
   */
  #tableReply(
    packet: Uint8Array,
    query: DnsMessage,
    records: readonly DnsRecord[],
    protocol: DnsProtocol,
  ): Uint8Array {
    let section = this.#sections.get(records);
    if (section === undefined) {
      section = encodeRecords(records, query.questions[0].name);
      this.#sections.set(records, section);
    }
    const whole = replyTo(packet, query, DNS_RCODE.noError, section, records.length);
    return whole.length <= udpLimit(query, protocol) ? whole : fit(packet, query, records, protocol);
  }

  #malformed(error: Error, bytes: number): void {
    this.#options.metrics.counter("dns_malformed_requests_total").inc();
    const passedOver = this.#malformedLog.take("malformed");
    if (passedOver === undefined) return;
    this.#options.log.warn("dropped unreadable DNS packets", {
      dropped: passedOver + 1,
      bytes,
      error: error.message,
    });
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const socket of this.#connections) socket.destroy();
    await Promise.all([
      ...this.#udp.map((udp) => new Promise<void>((resolve) => udp.close(() => resolve()))),
      ...this.#tcp.map((tcp) => new Promise<void>((resolve) => tcp.close(() => resolve()))),
    ]);
    this.#udp.length = 0;
    this.#tcp.length = 0;
  }
}

/**
 * A reply to `query`: its header and first question as they came (the name's case kept for resolvers that
 * check it), then `section` holding `count` encoded records. Copying the question means a name that reads
 * back only escaped (control bytes in a label) is never written again.
 */
function replyTo(
  packet: Uint8Array,
  query: DnsMessage,
  rcode: number,
  section: Uint8Array = new Uint8Array(0),
  count = 0,
  truncated = false,
): Uint8Array {
  const end = query.questions.length > 0 ? firstQuestionEnd(packet) : HEADER_BYTES;
  const out = new Uint8Array(end + section.length);
  out.set(packet.subarray(0, end));
  out.set(section, end);
  const header = new DataView(out.buffer);
  header.setUint16(2, replyFlags(query, rcode, truncated));
  header.setUint32(4, ((query.questions.length > 0 ? 1 : 0) << 16) | count);
  header.setUint32(8, 0);
  return out;
}

/** The flags of a reply: opcode and RD as asked, recursion available, authoritative when answered. */
function replyFlags(query: DnsMessage, rcode: number, truncated: boolean): number {
  return DNS_FLAG.qr | (query.flags & (0x7800 | DNS_FLAG.rd)) | DNS_FLAG.ra |
    (rcode === DNS_RCODE.noError ? DNS_FLAG.aa : 0) | (truncated ? DNS_FLAG.tc : 0) | rcode;
}

/** The longest reply the client takes: its EDNS size or 512 bytes over UDP, anything over TCP. */
function udpLimit(query: DnsMessage, protocol: DnsProtocol): number {
  return protocol === "tcp" ? Infinity : Math.max(DNS_MIN_UDP_BYTES, ednsUdpSize(query) ?? 0);
}

/**
 * An upstream's reply too long for the client over UDP, as Istio cuts it: the upstream's flags with TC set, the
 * question, no record; the client asks again over TCP. Relayed whole, the datagram was cut by the client's
 * buffer instead, and unreadable to it.
 */
function cutRelay(packet: Uint8Array, query: DnsMessage, reply: Uint8Array): Uint8Array {
  const out = replyTo(packet, query, DNS_RCODE.noError, new Uint8Array(0), 0, true);
  new DataView(out.buffer).setUint16(2, ((reply[2] << 8) | reply[3]) | DNS_FLAG.tc);
  return out;
}

/** The table's answer cut to what the client takes over UDP, TC set: as many records as fit. */
function fit(
  packet: Uint8Array,
  query: DnsMessage,
  records: readonly DnsRecord[],
  protocol: DnsProtocol,
): Uint8Array {
  const limit = udpLimit(query, protocol);
  const name = query.questions[0].name;
  let bytes = replyTo(packet, query, DNS_RCODE.noError, new Uint8Array(0), 0, true);
  for (let keep = records.length - 1; keep > 0; keep--) {
    const candidate = replyTo(
      packet,
      query,
      DNS_RCODE.noError,
      encodeRecords(records.slice(0, keep), name),
      keep,
      true,
    );
    if (candidate.length <= limit) {
      bytes = candidate;
      break;
    }
  }
  return bytes;
}
