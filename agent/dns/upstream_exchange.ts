/**
 * One DNS exchange with an upstream server, as Istio's agent makes it (miekg/dns `Client.Exchange`): a new
 * socket per query, the query's own protocol (UDP or TCP, length-prefixed), and one deadline for the whole
 * exchange. Only a reply from that server, with the query's id and the response bit set, is taken.
 *
 * @module
 */
import dgram from "node:dgram";
import net from "node:net";
import { DNS_FLAG } from "./dns_message.ts";
import { tcpFrame, TcpFrameReader } from "./tcp_frames.ts";
import { splitHostPort } from "@mesh/shared/net/host_port";

/** The protocol a query came in on; it goes upstream on the same. */
export type DnsProtocol = "udp" | "tcp";

/** The upstream did not answer in time, or not with a reply to the query. */
export class UpstreamError extends Error {
  override readonly name = "UpstreamError";
}

function isReplyTo(reply: Uint8Array, query: Uint8Array): boolean {
  return reply.length >= 12 && reply[0] === query[0] && reply[1] === query[1] &&
    (reply[2] & (DNS_FLAG.qr >> 8)) !== 0;
}

/**
 * Sends `query` to `server` and resolves with its reply.
 *
 * @throws {UpstreamError} when no reply came within `timeoutMs`, or the connection failed
 */
export function exchange(
  query: Uint8Array,
  server: string,
  protocol: DnsProtocol,
  timeoutMs: number,
): Promise<Uint8Array> {
  return protocol === "udp" ? exchangeUdp(query, server, timeoutMs) : exchangeTcp(query, server, timeoutMs);
}

/** A pending exchange: settled once, by the reply, the deadline or a socket error, then `release` runs. */
function deadline(server: string, protocol: string, timeoutMs: number, release: () => void) {
  const pending = Promise.withResolvers<Uint8Array>();
  const timer = setTimeout(
    () =>
      pending.reject(new UpstreamError(`No reply from ${server} over ${protocol} within ${timeoutMs} ms`)),
    timeoutMs,
  );
  const fail = (why: string) => pending.reject(new UpstreamError(`${protocol} to ${server}: ${why}`));
  const promise = pending.promise.finally(() => {
    clearTimeout(timer);
    release();
  });
  return { resolve: pending.resolve, fail, promise };
}

function exchangeUdp(query: Uint8Array, server: string, timeoutMs: number): Promise<Uint8Array> {
  const { host, port } = splitHostPort(server);
  const socket = dgram.createSocket(net.isIPv6(host) ? "udp6" : "udp4");
  const pending = deadline(server, "UDP", timeoutMs, () => socket.close());
  socket.on("error", (error) => pending.fail(error.message));
  socket.on("message", (reply, from) => {
    // Anything else that reaches the port (a late or spoofed packet) is ignored, as miekg/dns does.
    if (from.port === port && isReplyTo(reply, query)) pending.resolve(new Uint8Array(reply));
  });
  socket.send(query, port, host, (error) => {
    if (error) pending.fail(error.message);
  });
  return pending.promise;
}

function exchangeTcp(query: Uint8Array, server: string, timeoutMs: number): Promise<Uint8Array> {
  const { host, port } = splitHostPort(server);
  const socket = net.connect({ host, port });
  const pending = deadline(server, "TCP", timeoutMs, () => socket.destroy());
  const frames = new TcpFrameReader();
  socket.on("connect", () => socket.write(tcpFrame(query)));
  socket.on("data", (chunk: Uint8Array) => {
    for (const reply of frames.push(chunk)) if (isReplyTo(reply, query)) pending.resolve(reply);
  });
  socket.on("error", (error) => pending.fail(error.message));
  socket.on("close", () => pending.fail("closed before a reply"));
  return pending.promise;
}
