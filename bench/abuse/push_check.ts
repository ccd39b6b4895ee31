/**
 * A healthy proxy beside the attackers: one proxyless gRPC ADS client (`SimProxy`, grpc-js) watching one
 * service, while the service's VirtualService is rewritten every few seconds (a new route weight each time).
 * Each edit must reach the proxy as a route (RDS) response before the next edit; one that does not is a
 * missed push.
 *
 * @module
 */
import { TYPE_URL } from "../../proto/type_urls.ts";
import { jsonToStruct } from "../../proto/struct_json.ts";
import {
  clusterNames,
  epochMs,
  INITIAL_KNOBS,
  listenerName,
  meshService,
  rewriteService,
} from "../mesh_fixture.ts";
import { SimProxy } from "../sim_proxy.ts";
import { summarize } from "../latency_stats.ts";

/** Pushes the proxy received against the edits made. */
export interface PushSummary {
  /** Edits made while the proxy was watching. */
  readonly expected: number;
  /** Edits whose route response reached the proxy before the next edit (the last: within the grace). */
  readonly received: number;
  /** Median and worst time from an edit to its response, ms (received ones only). */
  readonly latencyP50Ms: number;
  readonly latencyMaxMs: number;
  /** How the proxy's stream ended, if it did. */
  readonly ended?: string;
}

/** Milliseconds the proxy may take to get its first full configuration. */
const FIRST_CONFIG_TIMEOUT_MS = 120_000;

/** The healthy proxy and the editor. Service 0 of the mesh fixture must be in `configDir`. */
export class PushCheck {
  readonly #proxy: SimProxy;
  readonly #edits: number[] = [];
  #running = true;
  #loop: Promise<void> = Promise.resolve();

  constructor(
    addr: string,
    readonly configDir: string,
    readonly scratchDir: string,
    readonly intervalMs = 3_000,
  ) {
    const service = meshService(0);
    const node = {
      id: `sidecar~10.250.0.1~healthy.${service.namespace}~${service.namespace}.svc.cluster.local`,
      metadata: jsonToStruct({ GENERATOR: "grpc", NAMESPACE: service.namespace, LABELS: { app: "healthy" } }),
    };
    this.#proxy = new SimProxy(0, addr, node, {
      delta: false,
      subscription: { listeners: [listenerName(service)], clusters: clusterNames(service) },
      nameMemo: new Map(),
    });
  }

  /** Connects the proxy, waits for its first full configuration, then starts editing. */
  async start(): Promise<void> {
    this.#proxy.open();
    const deadline = Date.now() + FIRST_CONFIG_TIMEOUT_MS;
    while (this.#proxy.fullAt === 0) {
      if (Date.now() > deadline || this.#proxy.ended !== undefined) {
        throw new Error(`The healthy proxy got no full configuration: ${JSON.stringify(this.#proxy.ended)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    this.#proxy.startRecording();
    this.#loop = this.#edit();
  }

  async #edit(): Promise<void> {
    const service = meshService(0);
    while (this.#running) {
      const v1Weight = 10 + (this.#edits.length % 80);
      this.#edits.push(epochMs());
      await rewriteService(this.configDir, this.scratchDir, service, { ...INITIAL_KNOBS, v1Weight });
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
    }
  }

  /** Stops editing, gives the last edit `graceMs` to arrive, closes the proxy and counts. */
  async stop(graceMs = 5_000): Promise<PushSummary> {
    this.#running = false;
    await this.#loop;
    await new Promise((resolve) => setTimeout(resolve, graceMs));
    const routes = this.#proxy.arrivals.filter((a) => a.typeUrl === TYPE_URL.route).map((a) => a.at);
    const end = epochMs();
    const latencies: number[] = [];
    this.#edits.forEach((at, i) => {
      const until = this.#edits[i + 1] ?? end;
      const first = routes.find((r) => r > at && r <= until);
      if (first !== undefined) latencies.push(first - at);
    });
    const ended = this.#proxy.ended;
    this.#proxy.close();
    const latency = summarize(latencies);
    return {
      expected: this.#edits.length,
      received: latencies.length,
      latencyP50Ms: Math.round(latency.p50),
      latencyMaxMs: Math.round(latency.max),
      ...(ended ? { ended: `${ended.code} ${ended.details}` } : {}),
    };
  }
}
