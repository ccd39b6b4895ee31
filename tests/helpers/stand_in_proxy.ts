/**
 * The stand-in for Envoy in tests: started by `mesh-agent proxy` exactly as Envoy would be
 * (`-c <bootstrap> --restart-epoch …`), it reads the bootstrap, opens ADS on the agent's XDS socket and SDS on its
 * SDS socket as Envoy does (ACKing what it gets; `default`, `ROOTCA`, and every secret its listeners name on the
 * bootstrap's `sds-grpc` cluster, such as a gateway's credentials), and serves the admin paths the agent uses: `/ready` (LIVE once
 * clusters and listeners arrived), `/stats/prometheus`, `/quitquitquit`, and `/certs` (the secrets it holds, as
 * PEM, for tests to inspect), and `/clusters?format=json` and `/listeners?format=json` (the names of the clusters and
 * listeners it holds, in Envoy's shape). SIGTERM ends it, as it ends Envoy.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { ADS_SERVICE_DEFINITION } from "../../proto/ads_service.ts";
import { decodeAny, encodeMessage } from "../../proto/any_codec.ts";
import { loadEnvoySchema } from "../../proto/envoy_schema.ts";
import { jsonToStruct } from "../../proto/struct_json.ts";
import { TYPE_URL, typeUrlOf } from "../../proto/type_urls.ts";
import { SDS_SERVICE_DEFINITION } from "../../agent/proxy/sds_server.ts";

const args = Deno.args;
const bootstrapPath = args[args.indexOf("-c") + 1];
const bootstrap = JSON.parse(Deno.readTextFileSync(bootstrapPath));
const pipeOf = (name: string): string =>
  bootstrap.static_resources.clusters.find((c: { name: string }) => c.name === name).load_assignment
    .endpoints[0]
    .lb_endpoints[0].endpoint.address.pipe.path;
const adminPort: number = bootstrap.admin.address.socket_address.port_value;
const node = { ...bootstrap.node, metadata: jsonToStruct(bootstrap.node.metadata) };
const schema = loadEnvoySchema();
const Response = schema.lookupType("envoy.service.discovery.v3.DiscoveryResponse");
const encodeRequest = (r: Record<string, unknown>) =>
  Buffer.from(encodeMessage(typeUrlOf("envoy.service.discovery.v3.DiscoveryRequest"), r));

const received = new Set<string>();
/** The names of the resources last received, by type URL (clusters and listeners come whole each time). */
const heldNames = new Map<string, string[]>();
const secrets: Record<string, string> = {};
let responses = 0;
/** ADS streams that failed: the agent keeps the proxy's stream across upstream loss, so this stays 0. */
let adsStreamFailures = 0;

function open(
  definition: typeof ADS_SERVICE_DEFINITION | typeof SDS_SERVICE_DEFINITION,
  method: string,
  socket: string,
  onResponse: (typeUrl: string, resources: Record<string, unknown>[]) => void,
  first: Record<string, unknown>[],
): void {
  // deno-lint-ignore no-explicit-any
  const Client = grpc.makeClientConstructor(definition as any, "x");
  const client = new Client(`unix://${socket}`, grpc.credentials.createInsecure());
  // deno-lint-ignore no-explicit-any
  const call: grpc.ClientDuplexStream<Buffer, Buffer> = (client as any)[method]();
  call.on("data", (bytes: Buffer) => {
    const response = Response.toObject(Response.decode(bytes), { defaults: true }) as {
      type_url: string;
      version_info: string;
      nonce: string;
      resources: { type_url: string; value: Uint8Array }[];
    };
    responses++;
    const anyType = schema.lookupType("google.protobuf.Any");
    const decoded = response.resources.map((r) =>
      decodeAny(anyType.encode(anyType.create({ type_url: r.type_url, value: r.value })).finish()).resource
    );
    onResponse(response.type_url, decoded);
    const names = first.find((f) => f.type_url === response.type_url)?.resource_names ?? [];
    call.write(encodeRequest({
      type_url: response.type_url,
      version_info: response.version_info,
      response_nonce: response.nonce,
      resource_names: names,
    }));
  });
  // As Envoy does: a failed stream is opened again after a pause.
  call.on("error", (error: Error) => {
    console.error(`stand-in ${method}: ${error.message}; retrying`);
    if (method === "StreamAggregatedResources") adsStreamFailures++;
    client.close();
    setTimeout(() => open(definition, method, socket, onResponse, first), 500);
  });
  for (const [i, request] of first.entries()) {
    call.write(encodeRequest(i === 0 ? { ...request, node } : request));
  }
}

/** As Envoy: one SDS subscription per secret name, opened the first time something names it. */
const subscribed = new Set<string>();
function subscribeSecret(name: string): void {
  if (subscribed.has(name)) return;
  subscribed.add(name);
  open(SDS_SERVICE_DEFINITION, "StreamSecrets", pipeOf("sds-grpc"), (_typeUrl, resources) => {
    for (const secret of resources) {
      const s = secret as {
        name: string;
        tls_certificate?: { certificate_chain: { inline_string: string } };
        validation_context?: { trusted_ca: { inline_string: string } };
      };
      secrets[s.name] = s.tls_certificate?.certificate_chain.inline_string ??
        s.validation_context?.trusted_ca.inline_string ?? "";
    }
  }, [{ type_url: TYPE_URL.secret, resource_names: [name] }]);
}

/** The secret names `value` (a listener, as JSON) asks for over the bootstrap's `sds-grpc` cluster. */
function sdsNamesIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) sdsNamesIn(item, out);
  } else if (value !== null && typeof value === "object") {
    const o = value as { name?: string; sds_config?: { api_config_source?: unknown } };
    if (
      typeof o.name === "string" &&
      JSON.stringify(o.sds_config?.api_config_source ?? "").includes('"sds-grpc"')
    ) {
      out.push(o.name);
    }
    for (const child of Object.values(value)) sdsNamesIn(child, out);
  }
  return out;
}

open(
  ADS_SERVICE_DEFINITION,
  "StreamAggregatedResources",
  pipeOf("xds-grpc"),
  (typeUrl, resources) => {
    received.add(typeUrl);
    heldNames.set(typeUrl, resources.map((r) => String(r.name)));
    if (typeUrl === TYPE_URL.listener) { for (const name of sdsNamesIn(resources)) subscribeSecret(name); }
  },
  [
    { type_url: TYPE_URL.cluster, resource_names: [] },
    { type_url: TYPE_URL.listener, resource_names: [] },
  ],
);
for (const name of ["default", "ROOTCA"]) subscribeSecret(name);

const server = Deno.serve({ hostname: "127.0.0.1", port: adminPort, onListen() {} }, (request) => {
  const path = new URL(request.url).pathname;
  const live = received.has(TYPE_URL.cluster) && received.has(TYPE_URL.listener);
  if (path === "/ready") {
    return new globalThis.Response(live ? "LIVE\n" : "PRE_INITIALIZING\n", { status: live ? 200 : 503 });
  }
  if (path === "/stats/prometheus") {
    return new globalThis.Response(
      `# TYPE envoy_responses counter\nenvoy_responses ${responses}\n` +
        `# TYPE envoy_ads_stream_failures counter\nenvoy_ads_stream_failures ${adsStreamFailures}\n`,
    );
  }
  if (path === "/certs") return globalThis.Response.json(secrets);
  if (path === "/clusters" || path === "/listeners") {
    const [kind, typeUrl] = path === "/clusters"
      ? ["cluster", TYPE_URL.cluster]
      : ["listener", TYPE_URL.listener];
    return globalThis.Response.json({
      [`${kind}_statuses`]: (heldNames.get(typeUrl) ?? []).map((name) => ({ name })),
    });
  }
  if (path === "/drain_listeners" && request.method === "POST") {
    // As Envoy: listeners drain, the process keeps running until it is stopped.
    console.error(`stand-in: draining listeners (${new URL(request.url).search.slice(1)})`);
    return new globalThis.Response("OK\n");
  }
  if (path === "/quitquitquit") {
    setTimeout(() => Deno.exit(0), 10);
    return new globalThis.Response("OK\n");
  }
  return new globalThis.Response("not found\n", { status: 404 });
});
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  Deno.exit(0);
});
