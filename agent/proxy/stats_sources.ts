/**
 * The sources the status port's `/stats/prometheus` merges: an HTTP endpoint on loopback (the proxy's admin
 * port, the application's metrics port) or a metrics registry in this process. Each reads within the limits it
 * is given, so one slow or huge source cannot hold or exhaust the agent.
 *
 * @module
 */
import { decodeChunks } from "@mesh/shared/http/request_limits";
import type { Metrics } from "@mesh/shared/metrics/metrics";

/** The limits one read must keep. */
export interface ReadLimits {
  /** Aborted when the read has taken too long. */
  readonly signal: AbortSignal;
  /** The most bytes of exposition accepted from the source. */
  readonly maxBytes: number;
}

/** One source of Prometheus text exposition. */
export interface StatsSource {
  /** Its name in skip notes and the `type` label of `scrape_failures_total`: envoy, agent, application. */
  readonly name: string;
  /** Reads the exposition; rejects with an error saying why when it cannot. */
  read(limits: ReadLimits): Promise<string>;
}

// Asks for the classic text format: the merged response is served as version 0.0.4, and OpenMetrics text from
// one source would not parse inside it.
const ACCEPT = "text/plain;version=0.0.4;q=1,*/*;q=0.1";

/** A source read by an HTTP GET of `url`; any status but 200 is a failure. */
export function httpStatsSource(name: string, url: string): StatsSource {
  return {
    name,
    async read({ signal, maxBytes }) {
      const response = await fetch(url, { signal, headers: { accept: ACCEPT }, redirect: "error" });
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new Error(`${url} answered HTTP ${response.status}`);
      }
      return await readCapped(response, maxBytes, url);
    },
  };
}

/** A source rendering `metrics`, this process's own registry. */
export function registryStatsSource(name: string, metrics: Metrics): StatsSource {
  return {
    name,
    async read({ maxBytes }) {
      const text = await metrics.render();
      const size = new TextEncoder().encode(text).byteLength;
      if (size > maxBytes) {
        throw new Error(`the registry rendered ${size} bytes, more than the ${maxBytes} allowed`);
      }
      return text;
    },
  };
}

/** Reads `response`'s body as text, giving up once it passes `maxBytes`. */
async function readCapped(response: Response, maxBytes: number, url: string): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`${url} sent more than the ${maxBytes} bytes allowed`);
    }
    chunks.push(value);
  }
  return decodeChunks(chunks, size);
}
