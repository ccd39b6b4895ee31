/**
 * The steady load of the soak benchmark (#36), each part a loop until `stop()`: config pushes (a service's
 * VirtualService rewritten), endpoint churn (WorkloadEntry files added and removed), proxies coming and going
 * (proxyless gRPC ADS clients, `SimProxy`), and validation webhook calls. Counts what it did.
 *
 * @module
 */
import { join } from "node:path";
import { jsonToStruct } from "../../proto/struct_json.ts";
import type { DiscoveryAddresses } from "../../tests/helpers/programs.ts";
import {
  clusterNames,
  INITIAL_KNOBS,
  listenerName,
  meshService,
  rewriteService,
  SERVICE_PORT,
} from "../mesh_fixture.ts";
import { SimProxy } from "../sim_proxy.ts";

/** How often each part acts, and how much it holds. */
export interface SoakRates {
  readonly services: number;
  readonly pushEveryMs: number;
  readonly churnEveryMs: number;
  /** Churned WorkloadEntries present at once; the oldest is removed past it. */
  readonly churnHeld: number;
  readonly proxies: number;
  /** Every this often one proxy leaves and a new one connects. */
  readonly proxyEveryMs: number;
  readonly webhookEveryMs: number;
}

/** What the load did. */
export interface SoakCounts {
  pushes: number;
  endpointsAdded: number;
  endpointsRemoved: number;
  proxiesConnected: number;
  proxiesLeft: number;
  webhookOk: number;
  webhookFailed: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A valid VirtualService in an AdmissionReview. */
function review(i: number): string {
  const host = meshService(i).host;
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `soak-${i}`,
      operation: "CREATE",
      object: {
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "VirtualService",
        metadata: { name: `soak-${i}`, namespace: meshService(i).namespace },
        spec: { hosts: [host], http: [{ route: [{ destination: { host } }] }] },
      },
    },
  });
}

/** The running load. */
export class SoakLoad {
  readonly counts: SoakCounts = {
    pushes: 0,
    endpointsAdded: 0,
    endpointsRemoved: 0,
    proxiesConnected: 0,
    proxiesLeft: 0,
    webhookOk: 0,
    webhookFailed: 0,
  };
  #running = true;
  readonly #proxies: SimProxy[] = [];
  #proxySerial = 0;
  readonly #loops: Promise<void>[];

  constructor(
    readonly addresses: DiscoveryAddresses,
    readonly configDir: string,
    readonly scratchDir: string,
    readonly rates: SoakRates,
  ) {
    for (let i = 0; i < rates.proxies; i++) this.#connectProxy();
    this.#loops = [
      this.#every(rates.pushEveryMs, (n) => this.#push(n)),
      this.#churn(),
      this.#every(rates.proxyEveryMs, () => this.#cycleProxy()),
      this.#every(rates.webhookEveryMs, (n) => this.#webhook(n)),
    ];
  }

  async #every(intervalMs: number, act: (n: number) => Promise<void> | void): Promise<void> {
    for (let n = 0; this.#running; n++) {
      await act(n);
      await sleep(intervalMs);
    }
  }

  async #push(n: number): Promise<void> {
    const service = meshService(n % this.rates.services);
    const v1Weight = 10 + (n % 80);
    await rewriteService(this.configDir, this.scratchDir, service, { ...INITIAL_KNOBS, v1Weight });
    this.counts.pushes++;
  }

  async #churn(): Promise<void> {
    const held: string[] = [];
    for (let n = 0; this.#running; n++) {
      const service = meshService(n % this.rates.services);
      const file = join(this.configDir, service.namespace, `churn-${n}.yaml`);
      await Deno.writeTextFile(
        file,
        `apiVersion: networking.mesh.io/v1beta1
kind: WorkloadEntry
metadata:
  name: churn-${n}
  namespace: ${service.namespace}
spec:
  address: 10.128.${Math.floor(n / 250) % 250}.${(n % 250) + 1}
  labels:
    app: ${service.name}
    version: v1
  ports:
    grpc: ${SERVICE_PORT}
`,
      );
      held.push(file);
      this.counts.endpointsAdded++;
      if (held.length > this.rates.churnHeld) {
        await Deno.remove(held.shift()!);
        this.counts.endpointsRemoved++;
      }
      await sleep(this.rates.churnEveryMs);
    }
    for (const file of held) await Deno.remove(file);
  }

  #connectProxy(): void {
    const i = this.#proxySerial++;
    const watched = [0, 1, 2].map((k) => meshService((i + k * 7) % this.rates.services));
    const namespace = watched[0].namespace;
    const proxy = new SimProxy(i, this.addresses.grpcAddr, {
      id: `sidecar~10.252.${Math.floor(i / 250) % 250}.${(i % 250) + 1}~soak-${i}.${namespace}~${namespace}` +
        ".svc.cluster.local",
      metadata: jsonToStruct({ GENERATOR: "grpc", NAMESPACE: namespace, LABELS: { app: "soak" } }),
    }, {
      delta: i % 2 === 1,
      subscription: { listeners: watched.map(listenerName), clusters: watched.flatMap(clusterNames) },
      nameMemo: new Map(),
    });
    proxy.open();
    this.#proxies.push(proxy);
    this.counts.proxiesConnected++;
  }

  #cycleProxy(): void {
    const leaving = this.#proxies.splice(Math.floor(Math.random() * this.#proxies.length), 1)[0];
    leaving?.close();
    if (leaving !== undefined) this.counts.proxiesLeft++;
    this.#connectProxy();
  }

  async #webhook(n: number): Promise<void> {
    try {
      const response = await fetch(`https://${this.addresses.httpsAddr}/validate`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: review(n % this.rates.services),
        signal: AbortSignal.timeout(10_000),
      });
      const body = await response.json();
      if (response.ok && body?.response?.allowed === true) this.counts.webhookOk++;
      else this.counts.webhookFailed++;
    } catch {
      this.counts.webhookFailed++;
    }
  }

  /** Proxies holding a full configuration now. */
  get proxiesWithConfig(): number {
    return this.#proxies.filter((p) => p.connected && p.fullAt > 0).length;
  }

  /** Ends every loop and closes every proxy. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
    for (const proxy of this.#proxies.splice(0)) proxy.close();
  }
}
