/**
 * The bundles of federated trust domains (`SPIFFE_BUNDLE_ENDPOINTS`), fetched from their endpoints and kept
 * fresh: their X.509 authorities are trusted for client certificates on the secure port, each only for
 * identities of its own trust domain.
 *
 * @module
 */
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import type { Logger } from "@mesh/shared/log/logger";
import { parseCertificatesPem } from "@mesh/shared/pki";
import { type BundleEndpoint, parseSpiffeBundle } from "./spiffe_bundle.ts";

/** Bounds of a refresh period: a bundle's hint is clamped into them. */
export const BUNDLE_REFRESH_MS = { min: 60_000, default: 300_000, max: 3_600_000 } as const;
/** After a failed fetch, the next try comes this much later; the last good bundle stays in force. */
export const BUNDLE_RETRY_MS = 30_000;
/** A bundle document larger than this is refused (real ones are a few KiB). */
export const MAX_BUNDLE_BYTES = 1024 * 1024;
/** How long one fetch may take. */
export const BUNDLE_FETCH_TIMEOUT_MS = 10_000;

/** Options of {@link FederatedBundles}. */
export interface FederatedBundlesOptions {
  readonly endpoints: readonly BundleEndpoint[];
  readonly log: Logger;
  /** Fetches a bundle document's text; default: `fetch` with a timeout and a size cap. */
  readonly fetchText?: (url: string) => Promise<string>;
  /** Timers of the refreshes (the runtime's when absent). */
  readonly timers?: Timers;
}

interface LoadedBundle {
  readonly pem: readonly string[];
  /** Base64 DER of each authority, for matching a chain's anchor. */
  readonly anchors: ReadonlySet<string>;
}

/** Base64 of DER bytes, the key a certificate is matched by. */
export function derKey(der: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < der.length; i += 0x8000) binary += String.fromCharCode(...der.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Keeps one bundle per federated trust domain, refreshed from its endpoint. */
export class FederatedBundles {
  readonly #options: FederatedBundlesOptions;
  readonly #bundles = new Map<string, LoadedBundle>();
  readonly #timers = new Map<string, unknown>();
  readonly #listeners = new Set<() => void>();
  readonly #clock: Timers;
  #stopped = false;

  constructor(options: FederatedBundlesOptions) {
    this.#options = options;
    this.#clock = options.timers ?? systemTimers;
  }

  /** Fetches every bundle once (a failure is logged and retried, never thrown), then keeps them fresh. */
  async start(): Promise<void> {
    await Promise.all(this.#options.endpoints.map((endpoint) => this.refresh(endpoint)));
  }

  /** Stops refreshing. */
  stop(): void {
    this.#stopped = true;
    for (const handle of this.#timers.values()) this.#clock.clearTimeout(handle);
    this.#timers.clear();
  }

  /** Trust domains whose bundle is loaded. */
  trustDomains(): string[] {
    return [...this.#bundles.keys()];
  }

  /** Every loaded authority, PEM. */
  rootsPem(): string {
    return [...this.#bundles.values()].flatMap((b) => b.pem).join("");
  }

  /** The federated trust domain whose bundle holds `anchorDer`, if any. */
  trustDomainOfAnchor(anchorDer: Uint8Array): string | undefined {
    const key = derKey(anchorDer);
    for (const [trustDomain, bundle] of this.#bundles) if (bundle.anchors.has(key)) return trustDomain;
    return undefined;
  }

  /** Calls `listener` after a bundle's authorities changed; returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Fetches one endpoint now and schedules its next fetch. */
  async refresh(endpoint: BundleEndpoint): Promise<void> {
    const { log } = this.#options;
    let nextMs = BUNDLE_RETRY_MS;
    try {
      const text = await (this.#options.fetchText ?? fetchBundleText)(endpoint.url);
      const bundle = parseSpiffeBundle(text, `${endpoint.url} (bundle of ${endpoint.trustDomain})`);
      const pem = bundle.x509AuthoritiesPem;
      const previous = this.#bundles.get(endpoint.trustDomain);
      if (previous === undefined || previous.pem.join("") !== pem.join("")) {
        const anchors = new Set(pem.map((p) => derKey(new Uint8Array(parseCertificatesPem(p)[0].rawData))));
        this.#bundles.set(endpoint.trustDomain, { pem, anchors });
        log.info("federated trust domain bundle loaded", {
          trustDomain: endpoint.trustDomain,
          url: endpoint.url,
          authorities: pem.length,
        });
        for (const listener of [...this.#listeners]) listener();
      }
      const hintMs = (bundle.refreshHintSeconds ?? BUNDLE_REFRESH_MS.default / 1000) * 1000;
      nextMs = Math.min(Math.max(hintMs, BUNDLE_REFRESH_MS.min), BUNDLE_REFRESH_MS.max);
    } catch (error) {
      log.warn("cannot fetch the bundle of a federated trust domain; keeping the last one loaded", {
        trustDomain: endpoint.trustDomain,
        url: endpoint.url,
        error: (error as Error).message,
        retryMs: BUNDLE_RETRY_MS,
      });
    }
    if (this.#stopped) return;
    this.#clock.clearTimeout(this.#timers.get(endpoint.trustDomain));
    this.#timers.set(endpoint.trustDomain, this.#clock.setTimeout(() => void this.refresh(endpoint), nextMs));
  }
}

/** GETs a bundle document over HTTPS with a timeout and a size cap. */
async function fetchBundleText(url: string): Promise<string> {
  const response = await fetch(url, {
    signal: AbortSignal.timeout(BUNDLE_FETCH_TIMEOUT_MS),
    redirect: "error",
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_BUNDLE_BYTES) {
      await reader.cancel();
      throw new Error(`the bundle is over ${MAX_BUNDLE_BYTES} bytes`);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
