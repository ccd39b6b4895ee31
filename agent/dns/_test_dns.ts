/**
 * Test support for the DNS proxy: queries, a UDP client that matches replies by id, and a fake upstream
 * resolver on a free loopback port.
 *
 * @module
 */
import dgram from "node:dgram";
import {
  decodeDnsMessage,
  DNS_CLASS_IN,
  DNS_FLAG,
  DNS_TYPE,
  type DnsMessage,
  encodeDnsMessage,
} from "./dns_message.ts";

/** The address every fake upstream answers. */
export const UPSTREAM_ANSWER = "192.0.2.1";

/** A query for `name` with recursion desired. */
export function dnsQuery(name: string, id = 7, type: number = DNS_TYPE.A): Uint8Array {
  return encodeDnsMessage({
    id,
    flags: DNS_FLAG.rd,
    questions: [{ name, type, class: DNS_CLASS_IN }],
    answers: [],
    authorities: [],
    additionals: [],
  });
}

/** The A and AAAA data of a reply, CNAMEs left out. */
export function addressesOf(reply: DnsMessage): unknown[] {
  return reply.answers.filter((a) => a.type !== DNS_TYPE.CNAME).map((a) => a.data);
}

/** A UDP socket the test asks from; replies are read in arrival order, or waited for by id. */
export class DnsTestClient {
  readonly #socket: dgram.Socket;
  readonly #replies: DnsMessage[] = [];
  #wake: (() => void) | undefined;

  /** An unbound socket of the family. */
  constructor(type: "udp4" | "udp6" = "udp4") {
    this.#socket = dgram.createSocket(type);
    this.#socket.on("message", (m) => {
      this.#replies.push(decodeDnsMessage(new Uint8Array(m)));
      this.#wake?.();
    });
  }

  /** Sends bytes as they are. */
  send(bytes: Uint8Array, port: number, host = "127.0.0.1"): void {
    this.#socket.send(bytes, port, host);
  }

  /** The next reply to arrive; rejects after `timeoutMs`. */
  async next(timeoutMs = 10_000): Promise<DnsMessage> {
    const deadline = Date.now() + timeoutMs;
    while (this.#replies.length === 0) {
      if (Date.now() >= deadline) throw new Error(`No DNS reply within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.#replies.shift()!;
  }

  /** Sends `bytes` and waits for the reply with their id (others are dropped). */
  async ask(bytes: Uint8Array, port: number, host = "127.0.0.1", timeoutMs = 10_000): Promise<DnsMessage> {
    const id = (bytes[0] << 8) | bytes[1];
    this.send(bytes, port, host);
    for (;;) {
      const reply = await this.next(timeoutMs);
      if (reply.id === id) return reply;
    }
  }

  /** Closes the socket. */
  close(): void {
    this.#socket.close();
  }
}

/**
 * A fake upstream resolver: answers every A query with {@link UPSTREAM_ANSWER} (`answers` times, whatever size
 * the query takes, as a misbehaving resolver might), or stays silent.
 */
export async function fakeUpstream(
  silent = false,
  answers = 1,
): Promise<{ address: string; seen: string[]; close(): void }> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const seen: string[] = [];
  socket.on("message", (m, from) => {
    const query = decodeDnsMessage(new Uint8Array(m));
    seen.push(query.questions[0].name);
    if (silent) return;
    const name = query.questions[0].name;
    const answer = encodeDnsMessage({
      ...query,
      flags: DNS_FLAG.qr | DNS_FLAG.rd | DNS_FLAG.ra,
      answers: Array.from(
        { length: answers },
        () => ({ name, type: DNS_TYPE.A, class: DNS_CLASS_IN, ttl: 60, data: UPSTREAM_ANSWER }),
      ),
    });
    socket.send(answer, from.port, from.address);
  });
  return { address: `127.0.0.1:${socket.address().port}`, seen, close: () => socket.close() };
}
