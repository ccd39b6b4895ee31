import assert from "node:assert/strict";
import net from "node:net";
import fc from "fast-check";
import FakeTimers from "@sinonjs/fake-timers";
import type { NameTable } from "@mesh/proto/name_table";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { silentLogger } from "@mesh/shared/log/logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { decodeDnsMessage, DNS_FLAG, DNS_MIN_UDP_BYTES, ednsUdpSize } from "./dns_message.ts";
import { DNS_PROXY_LIMITS, DnsProxy } from "./dns_proxy.ts";
import { tcpFrame, TcpFrameReader } from "./tcp_frames.ts";
import { addressesOf, dnsQuery, DnsTestClient } from "./_test_dns.ts";
import { mutatedMessage, wireMessage } from "./_dns_fuzz_inputs.ts";

const TABLE: NameTable = {
  "db.example.com": { ips: ["10.20.0.1", "2001:db8::1"], registry: "External", shortname: "", namespace: "" },
  "many.example.com": {
    ips: Array.from({ length: 60 }, (_, i) => `10.30.0.${i + 1}`),
    registry: "External",
    shortname: "",
    namespace: "",
  },
};

async function started(clock?: FakeTimers.Clock): Promise<DnsProxy> {
  const proxy = new DnsProxy({
    scope: { namespace: "shop", domain: "shop.svc.cluster.local", search: ["shop.svc.cluster.local"] },
    upstreams: [],
    port: 0,
    hosts: ["127.0.0.1"],
    log: silentLogger,
    metrics: new Metrics("agent", { version: "1", tag: "1" }),
    ...(clock ? { timers: timersOf(clock) } : {}),
  });
  proxy.updateTable(TABLE);
  await proxy.start();
  return proxy;
}

/** Packets near real queries: mutated ones, and well-formed ones asking the table's names. */
const packets = fc.oneof(
  mutatedMessage,
  wireMessage.map((m) => m.bytes),
  fc.constantFrom(dnsQuery("many.example.com."), dnsQuery("db.example.com.", 3, 28)).chain((q) =>
    fc.array(fc.tuple(fc.nat(q.length - 1), fc.nat(255)), { maxLength: 4 }).map((flips) => {
      const bytes = q.slice();
      for (const [at, value] of flips) bytes[at] = value;
      return bytes;
    })
  ),
);

Deno.test("every packet is answered with a reply to it that fits the client, or dropped; none throws", async () => {
  const proxy = await started();
  try {
    await fc.assert(
      fc.asyncProperty(packets, fc.constantFrom("udp" as const, "tcp" as const), async (packet, protocol) => {
        const reply = await proxy.answer(packet, protocol);
        if (reply === undefined) return;
        const read = decodeDnsMessage(reply);
        assert.equal(read.id, (packet[0] << 8) | packet[1]);
        assert.ok(read.flags & DNS_FLAG.qr);
        if (protocol === "udp") {
          const query = decodeDnsMessage(packet);
          assert.ok(reply.length <= Math.max(DNS_MIN_UDP_BYTES, ednsUdpSize(query) ?? 0));
        }
      }),
      { seed: 42, numRuns: 3_000 },
    );
  } finally {
    await proxy.close();
  }
});

Deno.test("after any datagram the proxy still answers a valid query over UDP", async () => {
  const proxy = await started();
  const client = new DnsTestClient("udp4");
  let id = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(packets, { minLength: 1, maxLength: 4 }), async (datagrams) => {
        for (const datagram of datagrams) client.send(datagram, proxy.port);
        id = (id + 1) % 0x10000;
        const reply = await client.ask(dnsQuery("db.example.com.", id), proxy.port);
        assert.deepEqual(addressesOf(reply), ["10.20.0.1"]);
      }),
      { seed: 42, numRuns: 150 },
    );
  } finally {
    client.close();
    await proxy.close();
  }
});

/** A TCP connection to the proxy: its replies in order, and whether it closed. */
function tcpClient(port: number) {
  const socket = net.connect({ port, host: "127.0.0.1" });
  const frames = new TcpFrameReader();
  const replies: Uint8Array[] = [];
  let wake = () => {};
  socket.on("data", (chunk: Uint8Array) => {
    replies.push(...frames.push(chunk));
    wake();
  });
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.on("error", () => {});
  return {
    socket,
    closed,
    /** The reply with `id`, once it came. */
    async reply(id: number): Promise<Uint8Array> {
      for (;;) {
        const found = replies.find((r) => ((r[0] << 8) | r[1]) === id);
        if (found) return found;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

Deno.test("a TCP stream of any queries, then a length prefix with less behind it, is closed at the idle time", async () => {
  const clock = FakeTimers.createClock();
  const proxy = await started(clock);
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(packets, { maxLength: 4 }),
        fc.uint8Array({ maxLength: 100 }),
        async (queries, tail) => {
          const client = tcpClient(proxy.port);
          try {
            // A query answered from the table first: the connection is served and its deadline runs.
            const ready = 0xfffe;
            client.socket.write(
              Uint8Array.of(
                ...queries.flatMap((q) => [...tcpFrame(q)]),
                ...tcpFrame(dnsQuery("db.example.com.", ready)),
              ),
            );
            await client.reply(ready);
            client.socket.write(Uint8Array.of(0xff, 0xff, ...tail));
            clock.tick(DNS_PROXY_LIMITS.tcpIdleMs);
            await client.closed;
          } finally {
            client.socket.destroy();
          }
        },
      ),
      { seed: 42, numRuns: 40 },
    );
    const client = tcpClient(proxy.port);
    client.socket.write(tcpFrame(dnsQuery("db.example.com.", 5)));
    assert.deepEqual(addressesOf(decodeDnsMessage(await client.reply(5))), ["10.20.0.1"]);
    client.socket.destroy();
  } finally {
    await proxy.close();
  }
});
