/**
 * The status port's `/stats/prometheus`: the proxy's statistics, the application's metrics when
 * `MESH_METRICS_ANNOTATIONS` says to scrape them (JSON `{"scrape": "true", "path": "/metrics", "port": "9090"}`,
 * as the injector writes it from the pod's scrape annotations), and the agent's own metrics, in one Prometheus
 * text exposition. A source that fails is skipped with a `#` comment saying why; the others are still served.
 *
 * @module
 */
import type { Logger } from "../../shared/log/logger.ts";

/** Where the application's metrics are, when it asked to be scraped. */
export interface AppMetricsTarget {
  readonly port: number;
  readonly path: string;
}

/** One source of the merged exposition. */
export interface StatsSource {
  /** Names the source in the comment of a failure. */
  readonly name: string;
  /** The source's exposition text. */
  read(): Promise<string>;
}

/** The largest exposition taken from one source; a bigger one is cut off at a line and flagged. */
export const MAX_SOURCE_BYTES = 16 * 1024 * 1024;
/** How long one source may take. */
export const SOURCE_TIMEOUT_MS = 2_000;

/**
 * Parses `MESH_METRICS_ANNOTATIONS`; undefined when it is empty or does not ask for scraping.
 *
 * @throws {RangeError} naming the variable and what is wrong
 */
export function parseMetricsAnnotations(
  text: string,
  name = "MESH_METRICS_ANNOTATIONS",
): AppMetricsTarget | undefined {
  if (text.trim() === "") return undefined;
  let doc: { scrape?: unknown; path?: unknown; port?: unknown };
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new RangeError(`Invalid ${name}: not JSON: ${(error as Error).message}`);
  }
  if (String(doc?.scrape ?? "").toLowerCase() !== "true") return undefined;
  const port = Number(doc.port ?? 80);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RangeError(`Invalid ${name}: port "${doc.port}": expected a port number from 1 to 65535`);
  }
  const path = typeof doc.path === "string" && doc.path !== "" ? doc.path : "/metrics";
  if (!path.startsWith("/")) {
    throw new RangeError(`Invalid ${name}: path "${path}": expected a path starting with /`);
  }
  return Object.freeze({ port, path });
}

/** A source read over HTTP from localhost with a timeout and a size cap. */
export function httpSource(name: string, url: string): StatsSource {
  return {
    name,
    async read() {
      const response = await fetch(url, { signal: AbortSignal.timeout(SOURCE_TIMEOUT_MS) });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status}`);
      }
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      let size = 0;
      while (true) {
        const { done, value } = await reader.read();
        if (done) return text + decoder.decode();
        size += value.length;
        if (size > MAX_SOURCE_BYTES) {
          await reader.cancel();
          const cut = text.lastIndexOf("\n");
          return `${cut < 0 ? "" : text.slice(0, cut + 1)}# cut: ${name} is over ${MAX_SOURCE_BYTES} bytes\n`;
        }
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

/** Reads every source at once and joins them in order; failures become comments and are logged once each. */
export async function mergeStats(
  sources: readonly StatsSource[],
  log: Logger,
  logged: Set<string>,
): Promise<string> {
  const parts = await Promise.all(sources.map(async (source) => {
    try {
      const text = await source.read();
      logged.delete(source.name);
      return text.endsWith("\n") || text === "" ? text : `${text}\n`;
    } catch (error) {
      const message = (error as Error).message;
      if (!logged.has(source.name)) {
        log.warn("a statistics source is unavailable; serving the others", {
          source: source.name,
          error: message,
        });
        logged.add(source.name);
      }
      return `# ${source.name} unavailable: ${message.replaceAll("\n", " ")}\n`;
    }
  }));
  return parts.join("");
}
