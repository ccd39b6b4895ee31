import assert from "node:assert/strict";
import fc from "fast-check";
import net from "node:net";
import type { NameTable } from "@mesh/proto/name_table";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import {
  decodeDnsMessage,
  DNS_FLAG,
  DNS_RCODE,
  DNS_TYPE,
  type DnsMessage,
  encodeDnsMessage,
  rcodeOf,
} from "./dns_message.ts";
import { DNS_UDP_QUERY_BYTES, DnsProxy } from "./dns_proxy.ts";
import { tcpFrame, TcpFrameReader } from "./tcp_frames.ts";
import { addressesOf, dnsQuery, DnsTestClient, fakeUpstream, UPSTREAM_ANSWER } from "./_test_dns.ts";

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

Deno.test("the DNS proxy answers a mesh host from the name table over UDP on IPv4 and IPv6", async () => {
  const { proxy, count } = await started([]);
  const v4 = new DnsTestClient("udp4"), v6 = new DnsTestClient("udp6");
  try {
    const a = await v4.ask(dnsQuery("db.example.com."), proxy.port);
    assert.equal(a.id, 7);
    assert.equal(rcodeOf(a.flags), DNS_RCODE.noError);
    assert.ok(a.flags & DNS_FLAG.aa);
    assert.deepEqual(addressesOf(a), ["10.20.0.1"]);
    assert.equal(a.answers[0].ttl, 30);
    const aaaa = await v6.ask(dnsQuery("DB.example.com.", 8, DNS_TYPE.AAAA), proxy.port, "::1");
    assert.deepEqual(addressesOf(aaaa), ["2001:db8::1"]);
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
  const client = new DnsTestClient("udp4");
  try {
    const reply = await client.ask(
      dnsQuery("web.shop.svc.cluster.local.shop.svc.cluster.local."),
      proxy.port,
    );
    assert.deepEqual(reply.answers.map((a) => a.data), ["web.shop.svc.cluster.local.", "10.96.0.7"]);
    assert.deepEqual(addressesOf(await client.ask(dnsQuery("web.shop."), proxy.port)), ["10.96.0.7"]);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("the DNS proxy forwards a name it does not know to the resolv.conf server and relays the reply", async () => {
  const upstream = await fakeUpstream();
  const { proxy, count } = await started([upstream.address]);
  const client = new DnsTestClient("udp4");
  try {
    const reply = await client.ask(dnsQuery("www.outside.test.", 99), proxy.port);
    assert.equal(reply.id, 99);
    assert.deepEqual(addressesOf(reply), [UPSTREAM_ANSWER]);
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

Deno.test("an upstream reply longer than the UDP client takes is cut as Istio cuts it: TC set, no record", async () => {
  // 100 answers: 1,634 bytes, past the 512 a query without EDNS takes. Before, it was relayed whole.
  const upstream = await fakeUpstream(false, 100);
  const { proxy } = await started([upstream.address]);
  const client = new DnsTestClient("udp4");
  try {
    const asked = dnsQuery("www.outside.test.", 12);
    const cut = await proxy.answer(asked, "udp");
    assert.ok(cut !== undefined && cut.length <= 512, `a reply of ${cut?.length} bytes`);
    const reply = decodeDnsMessage(cut);
    assert.equal(reply.id, 12);
    assert.ok(reply.flags & DNS_FLAG.tc);
    assert.ok(reply.flags & DNS_FLAG.qr);
    assert.equal(rcodeOf(reply.flags), DNS_RCODE.noError);
    assert.deepEqual(reply.questions.map((q) => q.name), ["www.outside.test."]);
    assert.equal(reply.answers.length, 0);
    assert.equal(
      (await client.ask(asked, proxy.port)).flags & DNS_FLAG.tc,
      DNS_FLAG.tc,
      "the same over the wire",
    );
    // The client that says it takes more gets it whole.
    const edns = encodeDnsMessage({
      ...decodeDnsMessage(dnsQuery("www.outside.test.", 13)),
      additionals: [{ name: ".", type: DNS_TYPE.OPT, class: 4096, ttl: 0, data: new Uint8Array(0) }],
    });
    assert.equal(decodeDnsMessage((await proxy.answer(edns, "udp"))!).answers.length, 100);
  } finally {
    client.close();
    upstream.close();
    await proxy.close();
  }
});

Deno.test("the DNS proxy answers SERVFAIL once the last upstream's deadline passed, and counts the failure", async () => {
  const silent = await fakeUpstream(true);
  const { proxy, count } = await started([silent.address], TABLE, 50);
  const client = new DnsTestClient("udp4");
  try {
    const reply = await client.ask(dnsQuery("www.outside.test."), proxy.port);
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
  const client = new DnsTestClient("udp4");
  try {
    assert.equal(
      rcodeOf((await client.ask(dnsQuery("db.example.com."), proxy.port)).flags),
      DNS_RCODE.servFail,
    );
    proxy.updateTable(TABLE);
    assert.deepEqual(addressesOf(await client.ask(dnsQuery("db.example.com."), proxy.port)), ["10.20.0.1"]);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("a new name table replaces the old one whole: a changed address and a removed host", async () => {
  const upstream = await fakeUpstream();
  const { proxy } = await started([upstream.address]);
  const client = new DnsTestClient("udp4");
  try {
    proxy.updateTable({ "db.example.com": { ...TABLE["db.example.com"], ips: ["10.20.0.99"] } });
    assert.deepEqual(addressesOf(await client.ask(dnsQuery("db.example.com."), proxy.port)), ["10.20.0.99"]);
    // Gone from the table: the upstream answers now.
    assert.deepEqual(addressesOf(await client.ask(dnsQuery("web.shop."), proxy.port)), [UPSTREAM_ANSWER]);
  } finally {
    client.close();
    upstream.close();
    await proxy.close();
  }
});

Deno.test("truncated, oversized, looping and response packets are dropped and counted; the next query is answered", async () => {
  const { proxy, count, log } = await started([]);
  const client = new DnsTestClient("udp4");
  try {
    const good = dnsQuery("db.example.com.");
    const header = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    const bad = [
      good.subarray(0, 5),
      good.subarray(0, good.length - 2),
      Uint8Array.from({ length: 4000 }, (_, i) => i % 251),
      Uint8Array.of(...header, 0xc0, 12, 0, 1, 0, 1),
      Uint8Array.of(good[0], good[1], good[2] | 0x80, ...good.subarray(3)),
    ];
    for (const packet of bad) client.send(packet, proxy.port, "127.0.0.1");
    const reply = await client.ask(dnsQuery("db.example.com.", 42), proxy.port);
    assert.equal(reply.id, 42, "no reply came for any dropped packet");
    assert.equal(await count("dns_malformed_requests_total"), bad.length);
    assert.equal(await count("dns_requests_total"), 1);
    assert.equal(log.lines.filter((l) => l.msg === "dropped unreadable DNS packets").length, 1);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("a UDP query longer than DNS_UDP_QUERY_BYTES is cut, dropped and counted; the next is answered", async () => {
  const { proxy, count } = await started([]);
  const client = new DnsTestClient("udp4");
  try {
    assert.equal((await client.ask(dnsQuery("db.example.com.", 1), proxy.port)).id, 1);
    // A well-formed query whose EDNS option data takes it past the limit.
    const long = encodeDnsMessage({
      ...decodeDnsMessage(dnsQuery("db.example.com.", 2)),
      additionals: [{ name: ".", type: DNS_TYPE.OPT, class: 4096, ttl: 0, data: new Uint8Array(5_000) }],
    });
    assert.ok(long.length > DNS_UDP_QUERY_BYTES);
    client.send(long, proxy.port, "127.0.0.1");
    assert.equal(
      (await client.ask(dnsQuery("db.example.com.", 3), proxy.port)).id,
      3,
      "no reply came to the long one",
    );
    assert.equal(await count("dns_malformed_requests_total"), 1);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("a burst of queries from one socket is answered in full, each under its id", async () => {
  const { proxy } = await started([]);
  const client = new DnsTestClient("udp4");
  try {
    const ids = Array.from({ length: 300 }, (_, i) => i + 1);
    for (const id of ids) client.send(dnsQuery("db.example.com.", id), proxy.port, "127.0.0.1");
    const seen: number[] = [];
    for (const _ of ids) {
      const reply = await client.next();
      assert.deepEqual(addressesOf(reply), ["10.20.0.1"]);
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
  const client = new DnsTestClient("udp4");
  const tcp = net.connect({ port: proxy.port, host: "127.0.0.1" });
  try {
    const udpReply = await client.ask(dnsQuery("many.example.com."), proxy.port);
    assert.ok(udpReply.flags & DNS_FLAG.tc);
    assert.ok(udpReply.answers.length > 0 && udpReply.answers.length < 60);
    const frames = new TcpFrameReader();
    const whole = new Promise<DnsMessage>((resolve) =>
      tcp.on("data", (chunk: Uint8Array) => {
        for (const message of frames.push(chunk)) resolve(decodeDnsMessage(message));
      })
    );
    tcp.write(tcpFrame(dnsQuery("many.example.com.", 3)));
    const tcpReply = await whole;
    assert.equal(tcpReply.answers.length, 60);
    assert.equal(tcpReply.flags & DNS_FLAG.tc, 0);
  } finally {
    tcp.destroy();
    client.close();
    await proxy.close();
  }
});

Deno.test("a table answer repeats the question as it came, letter case included", async () => {
  const { proxy } = await started([]);
  try {
    const asked = dnsQuery("Db.ExAmple.COM.", 11);
    const answer = await proxy.answer(asked, "udp");
    assert.ok(answer !== undefined);
    const questionEnd = asked.length;
    assert.deepEqual(answer.subarray(12, questionEnd), asked.subarray(12, questionEnd));
    const decoded = decodeDnsMessage(answer);
    assert.equal(decoded.id, 11);
    assert.deepEqual(addressesOf(decoded), ["10.20.0.1"]);
    assert.equal(decoded.answers[0].name, "db.example.com.");
  } finally {
    await proxy.close();
  }
});

Deno.test("a query whose name only reads back escaped (control bytes in a label) is answered, not thrown", async () => {
  const { proxy } = await started([]);
  const client = new DnsTestClient();
  try {
    const header = [0, 5, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    const label = [63, ...new Array(63).fill(1)];
    const odd = Uint8Array.of(...header, ...label, 0, 0, 1, 0, 1);
    const reply = await proxy.answer(odd, "udp");
    assert.ok(reply !== undefined);
    assert.equal(rcodeOf(decodeDnsMessage(reply).flags), DNS_RCODE.servFail, "no upstream to ask");
    client.send(odd, proxy.port);
    assert.equal((await client.next()).id, 5);
    assert.deepEqual(addressesOf(await client.ask(dnsQuery("db.example.com.", 6), proxy.port)), [
      "10.20.0.1",
    ]);
  } finally {
    client.close();
    await proxy.close();
  }
});

Deno.test("whatever bytes arrive, the proxy answers or drops them and never throws", async () => {
  const { proxy } = await started([]);
  try {
    const seeds = [dnsQuery("db.example.com."), dnsQuery("web.shop."), dnsQuery("many.example.com.", 9, 28)];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...seeds),
        fc.array(fc.tuple(fc.nat(40), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
        fc.constantFrom("udp" as const, "tcp" as const),
        async (seed, flips, protocol) => {
          const bytes = seed.slice();
          for (const [at, value] of flips) if (at < bytes.length) bytes[at] = value;
          await proxy.answer(bytes, protocol);
        },
      ),
      { numRuns: 1000 },
    );
  } finally {
    await proxy.close();
  }
});
