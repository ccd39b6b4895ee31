/**
 * Test support for several clusters: a service with pods and endpoints in a test API server, the Secret that
 * makes another cluster a remote one, the endpoints of an EDS answer, and a certificate from a server's CA.
 * Only tests import this file.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import {
  caServiceDefinition,
  type CertificateResponseMessage,
  MESH_CA_SERVICE,
} from "../../proto/ca_service.ts";
import assert from "node:assert/strict";
import { TYPE_URL } from "../../proto/type_urls.ts";
import type { ApiObject, OrchApiServer } from "../../shared/testing/orch_api_server.ts";
import type { TestAdsClient, TestResponse } from "../../discovery/xds/_test_ads_client.ts";

/** The service every multi-cluster test serves. */
export const RATINGS_HOST = "ratings.shop.svc.cluster.local";
/** Its outbound cluster. */
export const RATINGS_CLUSTER = `outbound|8080||${RATINGS_HOST}`;

/** `ratings.shop` in `api` with VIP `clusterIp` and one mesh pod per address of `ips`. */
export function ratings(api: OrchApiServer, clusterIp: string, ips: string[]): void {
  api.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "ratings", namespace: "shop" },
    spec: { clusterIP: clusterIp, ports: [{ name: "http", port: 8080 }] },
  });
  for (const ip of ips) {
    api.apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `ratings-${ip.replaceAll(".", "-")}`,
        namespace: "shop",
        labels: { app: "ratings", "security.mesh.io/tlsMode": "mesh" },
      },
      spec: { serviceAccountName: "ratings" },
      status: { podIP: ip, phase: "Running" },
    });
  }
  api.apply({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "ratings", namespace: "shop" },
    subsets: [{
      addresses: ips.map((ip) => ({
        ip,
        targetRef: { kind: "Pod", name: `ratings-${ip.replaceAll(".", "-")}`, namespace: "shop" },
      })),
      ports: [{ name: "http", port: 9080 }],
    }],
  });
}

/** The Secret `mesh-system/<name>` naming remote cluster `clusterId` with `kubeconfig`. */
export function clusterSecret(kubeconfig: string, clusterId = "c2", name = "cluster2"): ApiObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "mesh-system", labels: { "mesh/multiCluster": "true" } },
    data: { [clusterId]: Buffer.from(kubeconfig).toString("base64") },
  };
}

/** `address:port@weight` of every endpoint of the assignment of `cluster`, sorted. */
export function endpointsOf(response: TestResponse, cluster = RATINGS_CLUSTER): string[] {
  const assignment = response.resources.find((r) => r.name === cluster)?.fields as
    | { endpoints?: { lb_endpoints?: Record<string, unknown>[] }[] }
    | undefined;
  return (assignment?.endpoints ?? []).flatMap((l) => l.lb_endpoints ?? []).map((e) => {
    const socket = (e.endpoint as { address: { socket_address: { address: string; port_value: number } } })
      .address.socket_address;
    const weight = (e.load_balancing_weight as { value?: number } | undefined)?.value ?? 1;
    return `${socket.address}:${socket.port_value}@${weight}`;
  }).sort();
}

/** Asks the CA at `addr` (its serving certificate chaining to `rootPem`) to sign `csr` for bearer `token`. */
export async function requestCertificate(
  addr: string,
  rootPem: string,
  csr: string,
  token: string,
): Promise<CertificateResponseMessage> {
  const Client = grpc.makeGenericClientConstructor(caServiceDefinition(MESH_CA_SERVICE), MESH_CA_SERVICE);
  const client = new Client(addr, grpc.credentials.createSsl(Buffer.from(rootPem)), {
    "grpc.ssl_target_name_override": "localhost",
  });
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  try {
    return await new Promise<CertificateResponseMessage>((resolve, reject) =>
      // deno-lint-ignore no-explicit-any
      (client as any).CreateCertificate(
        { csr, validityDuration: 3600 },
        metadata,
        (error: grpc.ServiceError | null, response: CertificateResponseMessage) =>
          error ? reject(error) : resolve(response),
      )
    );
  } finally {
    client.close();
  }
}

/** A sidecar's state-of-the-world stream watching the endpoints of one cluster. */
export class EdsWatch {
  readonly #client: TestAdsClient;
  readonly #node: Record<string, unknown>;
  readonly #cluster: string;

  private constructor(client: TestAdsClient, node: Record<string, unknown>, cluster: string) {
    this.#client = client;
    this.#node = node;
    this.#cluster = cluster;
  }

  /** Subscribes `node` to the clusters on `client`, waits for `cluster`, then subscribes to its endpoints. */
  static async start(
    client: TestAdsClient,
    node: Record<string, unknown>,
    cluster = RATINGS_CLUSTER,
  ): Promise<EdsWatch> {
    const watch = new EdsWatch(client, node, cluster);
    client.send({ node, type_url: TYPE_URL.cluster, resource_names: [] });
    let cds = await client.next(30_000);
    while (!cds.resources.some((r) => r.name === cluster)) {
      watch.#ack(cds);
      cds = await client.next(30_000);
    }
    watch.#ack(cds);
    client.send({ node, type_url: TYPE_URL.endpoint, resource_names: [cluster] });
    return watch;
  }

  /** Reads responses, acknowledging each, until an EDS one lists `expected` (see `endpointsOf`). */
  async until(expected: string[], why: string): Promise<void> {
    const seen: string[][] = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const response = await this.#client.next(30_000);
      this.#ack(response, response.typeUrl === TYPE_URL.endpoint ? [this.#cluster] : []);
      if (response.typeUrl !== TYPE_URL.endpoint) continue;
      seen.push(endpointsOf(response, this.#cluster));
      if (JSON.stringify(seen.at(-1)) === JSON.stringify(expected)) return;
    }
    assert.fail(`${why}: expected ${expected.join(", ")}; got ${JSON.stringify(seen)}`);
  }

  #ack(response: TestResponse, names: string[] = []): void {
    this.#client.send({
      node: this.#node,
      type_url: response.typeUrl,
      version_info: response.version,
      response_nonce: response.nonce,
      resource_names: names,
    });
  }
}
