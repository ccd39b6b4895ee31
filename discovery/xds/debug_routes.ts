/**
 * Debug paths of the xDS server: connected proxies and their watches, nonce sync state, what each proxy was
 * sent (decoded with Envoy's schema), the encoded-resource cache, config distribution, and (admin only)
 * forced disconnects.
 *
 * @module
 */
import type protobuf from "protobufjs";
import { decodeAny } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { shortTypeName, TYPE_URL } from "@mesh/proto/type_urls";
import { HttpError, jsonResponse, type Router } from "@mesh/shared/http/router";
import type { AdsServer } from "./ads_server.ts";
import type { PushSnapshot } from "../generate/generator.ts";
import type { SentResources, XdsConnection } from "./xds_connection.ts";

/** Options of the xDS debug paths. */
export interface XdsDebugOptions {
  /** `ENABLE_ADMIN_ENDPOINTS`: registers `/debug/force_disconnect`. */
  readonly adminEndpoints: boolean;
  /** Envoy's schema for decoding what was sent; loaded once when omitted. */
  readonly schema?: protobuf.Root;
}

/** Registers the xDS debug paths on `router` and returns it. */
export function addXdsDebugRoutes<P extends PushSnapshot>(
  router: Router,
  service: AdsServer<P>,
  options: XdsDebugOptions,
): Router {
  const schema = options.schema ?? loadEnvoySchema();
  router.add(
    "/debug/adsz",
    "Connected proxies and their watches; POST ?push=true pushes everything and answers with the outcome only (ENABLE_ADMIN_ENDPOINTS=true)",
    (request, url) => {
      const pushRequested = url.searchParams.get("push") === "true";
      if (pushRequested && !options.adminEndpoints) {
        throw new HttpError(403, "Pushing from the debug interface needs ENABLE_ADMIN_ENDPOINTS=true");
      }
      if (pushRequested && request.method !== "POST") {
        throw new HttpError(405, "Pushing changes state: use POST /debug/adsz?push=true");
      }
      if (pushRequested) {
        // Only the outcome: listing every proxy's watched names (millions of strings at fleet scale) would
        // hold the event loop before the push could send its first byte.
        return jsonResponse({ pushed: service.pushAll("debug"), totalClients: service.connections().length });
      }
      const clients = service.connections().map((c) => ({
        connectionId: c.id,
        proxyId: c.proxy.id,
        nodeId: c.proxy.nodeId,
        peer: c.peer,
        connectedAt: c.connectedAt.toISOString(),
        protocol: c.protocol,
        generator: service.generators.flavorOf(c.proxy),
        watches: byShortType(c.watches()),
      }));
      return jsonResponse({
        totalClients: clients.length,
        clients,
      });
    },
    ["GET", "POST"],
  );
  router.add(
    "/debug/syncz",
    "Sent and acknowledged nonces and versions per type per proxy",
    () =>
      jsonResponse(
        service.connections().map((c) => ({
          connectionId: c.id,
          proxyId: c.proxy.id,
          protocol: c.protocol,
          types: byShortType(c.syncStatus()),
        })),
      ),
  );
  router.add(
    "/debug/config_dump",
    "What a proxy was sent, decoded (?proxyID=<pod>.<namespace>)",
    (_req, url) => {
      const connection = connectionFor(service, url, "/debug/config_dump");
      const configs: Record<string, unknown> = {};
      for (const [typeUrl, sent] of connection.sentResources()) {
        configs[shortTypeName(typeUrl)] = decodeSent(sent, schema);
      }
      return jsonResponse({ proxyId: connection.proxy.id, connectionId: connection.id, configs });
    },
  );
  router.add(
    "/debug/edsz",
    "Endpoints a proxy was sent, decoded (?proxyID=<pod>.<namespace>)",
    (_req, url) => {
      const connection = connectionFor(service, url, "/debug/edsz");
      const sent = connection.sentResources().get(TYPE_URL.endpoint);
      return jsonResponse({
        proxyId: connection.proxy.id,
        connectionId: connection.id,
        ...(sent === undefined ? { resources: [] } : decodeSent(sent, schema)),
      });
    },
  );
  router.add(
    "/debug/cachez",
    "The encoded-resource cache: counters and entries; and what the memos of names and shapes hold",
    () =>
      jsonResponse({ ...service.cache.stats(), entries: service.cache.entries(), ...service.memoStats() }),
  );
  router.add(
    "/debug/config_distribution",
    "Which proxy acknowledged which config version (?resource=<kind>/<namespace>/<name>)",
    (_req, url) => {
      if (service.tracker === undefined) {
        throw new HttpError(
          404,
          "Config distribution tracking is off: set DISCOVERY_ENABLE_CONFIG_DISTRIBUTION_TRACKING=true",
        );
      }
      return jsonResponse(service.tracker.report(url.searchParams.get("resource") ?? undefined));
    },
  );
  if (options.adminEndpoints) {
    router.add(
      "/debug/force_disconnect",
      "Ends a proxy's ADS streams so it reconnects (?proxyID=<pod>.<namespace>)",
      (_req, url) => {
        const id = proxyIdParam(url, "/debug/force_disconnect");
        const disconnected = service.disconnect(id, "Disconnected by /debug/force_disconnect; reconnect");
        if (disconnected === 0) throw unknownProxy(id);
        return jsonResponse({ proxyId: id, disconnected });
      },
      ["POST"],
    );
  }
  return router;
}

function byShortType<T>(byTypeUrl: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(byTypeUrl).map(([t, v]) => [shortTypeName(t), v]));
}

function proxyIdParam(url: URL, path: string): string {
  const id = url.searchParams.get("proxyID");
  if (id === null || id === "") {
    throw new HttpError(400, `Missing query parameter "proxyID": expected ${path}?proxyID=<pod>.<namespace>`);
  }
  return id;
}

function unknownProxy(id: string): HttpError {
  return new HttpError(404, `No connected proxy "${id}": see /debug/adsz for the connected proxies`);
}

/** The newest connection of the proxy named by `?proxyID=`. */
function connectionFor<P extends PushSnapshot>(
  service: AdsServer<P>,
  url: URL,
  path: string,
): XdsConnection<P> {
  const id = proxyIdParam(url, path);
  const connection = service.findConnections(id).at(-1);
  if (connection === undefined) throw unknownProxy(id);
  return connection;
}

function decodeSent(sent: SentResources, schema: protobuf.Root) {
  const resources = [...sent.resources.values()].map((r) => {
    try {
      const decoded = decodeAny(r.encoded, schema);
      return { "@type": decoded.typeUrl, ...decoded.resource };
    } catch (error) {
      return { name: r.name, error: (error as Error).message };
    }
  });
  return { version: sent.version, nonce: sent.nonce, resources };
}
