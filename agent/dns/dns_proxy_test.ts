import assert from "node:assert/strict";
import dgram from "node:dgram";
import net from "node:net";
import type { NameTable } from "../../proto/name_table.ts";
import { Metrics } from "../../shared/metrics/metrics.ts";
import { RecordingLogger } from "../../shared/testing/recording_logger.ts";
import {
  decodeDnsMessage,
  DNS_CLASS_IN,
  DNS_FLAG,
  DNS_RCODE,
  DNS_TYPE,
  type DnsMessage,
  encodeDnsMessage,
  rcodeOf,
} from "./dns_message.ts";
import { DnsProxy } from "./dns_proxy.ts";
import { tcpFrame, TcpFrameReader } from "./tcp_frames.ts";

const TABLE: NameTable = {
  "db.example.com": { ips: ["10.20.0.1", "2001:db8::1"], registry: "External", shortname: "", namespace: "" },
  "web.shop.svc.cluster.local": {
    ips: ["10.96.0.7"],
    registry: "Orchestrator",
    shortname: "web",
    namespace: "shop",
  },
  "many.example.com": {
    ips: Array.from({ length: 60 }, (_, i) => `10.30.0.${i + 1}`),
    registry: "External",
    shortname: "",
    namespace: "",
  },
};
const SCOPE = { namespace: "shop", domain: "shop.svc.cluster.local", search: ["shop.svc.cluster.local"] };

function query(name: string, id = 7, type: number = DNS_TYPE.A): Uint8Array {
  return encodeDnsMessage({
    id,
    flags: DNS_FLAG.rd,
    questions: [{ name, type, class: DNS_CLASS_IN }],
    answers: [],
    authorities: [],
    additionals: [],
  });
}

/** A UDP socket the test asks from; replies are read in order. */
class Client {
  readonly socket: dgram.Socket;
  readonly #replies: DnsMessage[] = [];
  #waiting: (() => void) | undefined;

  constructor(type: "udp4" | "udp6") {
    this.socket = dgram.createSocket(type);
    this.socket.on("message", (m) => {
      this.#replies.push(decodeDnsMessage(new Uint8Array(m)));
      this.#waiting?.();
    });
  }

  send(bytes: Uint8Array, port: number, host: string): void {
    this.socket.send(bytes, port, host);
  }

  async next(): Promise<DnsMessage> {
    while (this.#replies.length === 0) await new Promise<void>((r) => this.#waiting = r);
    return this.#replies.shift()!;
  }

  async ask(bytes: Uint8Array, port: number, host = "127.0.0.1"): Promise<DnsMessage> {
    this.send(bytes, port, host);
    return await this.next();
  }

  close(): void {
    this.socket.close();
  }
}

/** A fake upstream resolver on a free loopback port: answers every query with 192.0.2.1, or stays silent. */
async function fakeUpstream(silent = false): Promise<{ address: string; seen: string[]; close(): void }> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", r));
  const seen: string[] = [];
  socket.on("message", (m, from) => {
    const q = decodeDnsMessage(new Uint8Array(m));
    seen.push(q.questions[0].name);
    if (silent) return;
    const answer = encodeDnsMessage({
      ...q,
      flags: DNS_FLAG.qr | DNS_FLAG.rd | DNS_FLAG.ra,
      answers: [{
        name: q.questions[0].name,
        type: DNS_TYPE.A,
        class: DNS_CLASS_IN,
        ttl: 60,
        data: "192.0.2.1",
      }],
    });
    socket.send(answer, from.port, from.address);
  });
  return { address: `127.0.0.1:${socket.address().port}`, seen, close: () => socket.close() };
}

async function started(upstreams: string[], table: NameTable | null = TABLE, timeoutMs = 2_000) {
  const metrics = new Metrics("agent", { version: "1", tag: "1" });
  const log = new RecordingLogger();
  const proxy = new DnsProxy({
    scope: SCOPE,
    upstreams,
    port: 0,
    upstreamTimeoutMs: timeoutMs,
    log,
    metrics,
  });
  if (table) proxy.updateTable(table);
  await proxy.start();
  // A counter's value, or a histogram's count of observations.
  const count = async (name: string) =>
    (await metrics.registry.getSingleMetric(name)!.get()).values
      .filter((v) => !("metricName" in v) || v.metricName === `${name}_count`)
      .reduce((sum, v) => sum + v.value, 0);
  return { proxy, metrics, log, count };
}

const addresses = (m: DnsMessage) => m.answers.filter((a) => a.type !== DNS_TYPE.CNAME).map((a) => a.data);

Deno.test("the DNS proxy answers a mesh host from the name table over UDP on IPv4 and IPv6", async () => {
  const { proxy, count } = await started([]);
  const v4 = new Client("udp4"), v6 = new Client("udp6");
  try {
    const a = await v4.ask(query("db.example.com."), proxy.port);
    assert.equal(a.id, 7);
    assert.equal(rcodeOf(a.flags), DNS_RCODE.noError);
    assert.ok(a.flags & DNS_FLAG.aa);
    assert.deepEqual(addresses(a), ["10.20.0.1"]);
    assert.equal(a.answers[0].ttl, 30);
    const aaaa = await v6.ask(query("DB.example.com.", 8, DNS_TYPE.AAAA), proxy.port, "::1");
    assert.deepEqual(addresses(aaaa), ["2001:db8::1"]);
    assert.equal(await count("dns_requests_total"), 2);
    assert.equal(await count("dns_upstream_requests_total"), 0);
  } finally {
    v4.close();
    v6.close();
    await proxy.close();
  }
});

Deno.test("the DNS proxy answers the search-domain form a resolver tries first with a CNAME", async () => {
  const { proxy } = await started([]);
  const client = new Client("udp4");
  try {
    const reply = await client.ask(query("web.shop.svc.cluster.local.shop.svc.cluster.local."), proxy.port);
    assert.deepEqual(reply.answers.map((a) => a.data), ["web.shop.svc.cluster.local.", "10.96.0.7"]);
    assert.deepEqual(addresses(await client.ask(query("web.shop."), proxy.port)), ["10.96.0.7"]);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("the DNS proxy forwards a name it does not know to the resolv.conf server and relays the reply", async () => {
  const upstream = await fakeUpstream();
  const { proxy, count } = await started([upstream.address]);
  const client = new Client("udp4");
  try {
    const reply = await client.ask(query("www.outside.test.", 99), proxy.port);
    assert.equal(reply.id, 99);
    assert.deepEqual(addresses(reply), ["192.0.2.1"]);
    assert.deepEqual(upstream.seen, ["www.outside.test."]);
    assert.equal(await count("dns_upstream_requests_total"), 1);
    assert.equal(await count("dns_upstream_failures_total"), 0);
    assert.equal(await count("dns_upstream_request_duration_seconds"), 1);
  } finally {
    client.close();
    upstream.close();
    await proxy.close();
  }
});

Deno.test("the DNS proxy answers SERVFAIL once the last upstream's deadline passed, and counts the failure", async () => {
  const silent = await fakeUpstream(true);
  const { proxy, count } = await started([silent.address], TABLE, 50);
  const client = new Client("udp4");
  try {
    const reply = await client.ask(query("www.outside.test."), proxy.port);
    assert.equal(rcodeOf(reply.flags), DNS_RCODE.servFail);
    assert.equal(await count("dns_upstream_failures_total"), 1);
  } finally {
    client.close();
    silent.close();
    await proxy.close();
  }
});

Deno.test("before the first name table every query gets SERVFAIL, as in Istio", async () => {
  const { proxy } = await started([], null);
  const client = new Client("udp4");
  try {
    assert.equal(rcodeOf((await client.ask(query("db.example.com."), proxy.port)).flags), DNS_RCODE.servFail);
    proxy.updateTable(TABLE);
    assert.deepEqual(addresses(await client.ask(query("db.example.com."), proxy.port)), ["10.20.0.1"]);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("a new name table replaces the old one whole: a changed address and a removed host", async () => {
  const upstream = await fakeUpstream();
  const { proxy } = await started([upstream.address]);
  const client = new Client("udp4");
  try {
    proxy.updateTable({ "db.example.com": { ...TABLE["db.example.com"], ips: ["10.20.0.99"] } });
    assert.deepEqual(addresses(await client.ask(query("db.example.com."), proxy.port)), ["10.20.0.99"]);
    // Gone from the table: the upstream answers now.
    assert.deepEqual(addresses(await client.ask(query("web.shop."), proxy.port)), ["192.0.2.1"]);
  } finally {
    client.close();
    upstream.close();
    await proxy.close();
  }
});

Deno.test("truncated, oversized, looping and response packets are dropped and counted; the next query is answered", async () => {
  const { proxy, count, log } = await started([]);
  const client = new Client("udp4");
  try {
    const good = query("db.example.com.");
    const header = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    const bad = [
      good.subarray(0, 5),
      good.subarray(0, good.length - 2),
      Uint8Array.from({ length: 4000 }, (_, i) => i % 251),
      Uint8Array.of(...header, 0xc0, 12, 0, 1, 0, 1),
      Uint8Array.of(good[0], good[1], good[2] | 0x80, ...good.subarray(3)),
    ];
    for (const packet of bad) client.send(packet, proxy.port, "127.0.0.1");
    const reply = await client.ask(query("db.example.com.", 42), proxy.port);
    assert.equal(reply.id, 42, "no reply came for any dropped packet");
    assert.equal(await count("dns_malformed_requests_total"), bad.length);
    assert.equal(await count("dns_requests_total"), 1);
    assert.equal(log.lines.filter((l) => l.msg === "dropped unreadable DNS packets").length, 1);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("a burst of queries from one socket is answered in full, each under its id", async () => {
  const { proxy } = await started([]);
  const client = new Client("udp4");
  try {
    const ids = Array.from({ length: 300 }, (_, i) => i + 1);
    for (const id of ids) client.send(query("db.example.com.", id), proxy.port, "127.0.0.1");
    const seen: number[] = [];
    for (const _ of ids) {
      const reply = await client.next();
      assert.deepEqual(addresses(reply), ["10.20.0.1"]);
      seen.push(reply.id);
    }
    assert.deepEqual(seen.sort((a, b) => a - b), ids);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("an answer too long for UDP is cut with TC set; over TCP it comes whole", async () => {
  const { proxy } = await started([]);
  const client = new Client("udp4");
  const tcp = net.connect({ port: proxy.port, host: "127.0.0.1" });
  try {
    const udpReply = await client.ask(query("many.example.com."), proxy.port);
    assert.ok(udpReply.flags & DNS_FLAG.tc);
    assert.ok(udpReply.answers.length > 0 && udpReply.answers.length < 60);
    const frames = new TcpFrameReader();
    const whole = new Promise<DnsMessage>((resolve) =>
      tcp.on("data", (chunk: Uint8Array) => {
        for (const message of frames.push(chunk)) resolve(decodeDnsMessage(message));
      })
    );
    tcp.write(tcpFrame(query("many.example.com.", 3)));
    const tcpReply = await whole;
    assert.equal(tcpReply.answers.length, 60);
    assert.equal(tcpReply.flags & DNS_FLAG.tc, 0);
  } finally {
    tcp.destroy();
    client.close();
    await proxy.close();
  }
});
