/**
 * A discovery server killed outright (`kill -9`: no drain, no GOAWAY) and started again on the same ports:
 * proxies reconnecting as gRPC clients do all get their config again from the new process.
 */
import assert from "node:assert/strict";
import { TYPE_URL } from "../proto/type_urls.ts";
import { TestAdsClient, testNode } from "../discovery/xds/_test_ads_client.ts";
import { waitFor } from "../shared/testing/wait_for.ts";
import { discoveryAddresses, discoveryArgs, type RunningProgram, startProgram } from "./helpers/programs.ts";

const PROXIES = 30;
/** A reconnecting gRPC client waits about this long before trying again (its first backoff). */
const RECONNECT_MS = 200;

/** A proxy that asks for clusters on one ADS stream and, when the stream ends, opens another. */
class ReconnectingProxy {
  /** The stream now open, if any. */
  #client: TestAdsClient | undefined;
  #stopped = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** Streams opened so far; `configuredOn` is the one that last brought clusters. */
  streams = 0;
  configuredOn = 0;

  constructor(readonly port: number, readonly index: number) {
    this.#connect();
  }

  /** True when the stream open now has brought the proxy its clusters. */
  get configured(): boolean {
    return this.#client !== undefined && this.configuredOn === this.streams;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry);
    this.#client?.close();
  }

  #connect(): void {
    if (this.#stopped) return;
    const client = TestAdsClient.sotw(this.port);
    const stream = ++this.streams;
    this.#client = client;
    client.send({
      node: testNode(`sidecar~10.8.0.${this.index}~p${this.index}.shop~shop.svc.cluster.local`, {
        NAMESPACE: "shop",
      }),
      type_url: TYPE_URL.cluster,
      resource_names: [],
    });
    client.next(60_000).then((response) => {
      if (response.resources.length > 0) this.configuredOn = stream;
    }, () => {});
    client.ended().then(() => {
      client.close();
      if (this.#client === client) this.#client = undefined;
      if (!this.#stopped) this.#retry = setTimeout(() => this.#connect(), RECONNECT_MS);
    });
  }
}

Deno.test("After kill -9 and a restart on the same port, every reconnecting proxy has config again", async () => {
  const addresses = discoveryAddresses();
  const args = discoveryArgs(addresses, ["--registries", "Mock", "--configDir", "examples/config"]);
  const port = Number(addresses.grpcAddr.split(":").at(-1));
  let server: RunningProgram = startProgram("mesh-discovery", args);
  const proxies: ReconnectingProxy[] = [];
  try {
    await server.waitFor(/discovery server started/);
    for (let i = 0; i < PROXIES; i++) proxies.push(new ReconnectingProxy(port, i));
    await waitFor(() => proxies.every((p) => p.configured), "every proxy's first config", 60_000);

    const killed = await server.stop("SIGKILL");
    assert.equal(killed.signal, "SIGKILL");
    await waitFor(() => proxies.every((p) => !p.configured), "every stream to end with the process", 60_000);

    server = startProgram("mesh-discovery", args);
    await server.waitFor(/discovery server started/);
    await waitFor(
      () => proxies.every((p) => p.configured),
      "every proxy's config from the new process",
      60_000,
    );
    assert.ok(proxies.every((p) => p.streams >= 2), "each proxy reconnected");
  } finally {
    for (const proxy of proxies) proxy.stop();
    await server.stop();
  }
});
