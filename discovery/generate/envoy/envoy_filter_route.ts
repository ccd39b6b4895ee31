/**
 * EnvoyFilter ROUTE_CONFIGURATION, VIRTUAL_HOST and HTTP_ROUTE patches on a generated route configuration:
 * which route configuration (by name or port: a sidecar's are named by port, a gateway's `http.<port>`),
 * virtual host and route a patch's match selects, and what its operation does.
 *
 * @module
 */
import type protobuf from "protobufjs";
import type { EnvoyConfigObjectPatch } from "@mesh/shared/config/networking/envoy_filter";
import { mergeInto, patchObject } from "./proto_merge.ts";
import { patchTypedList } from "./envoy_filter_list.ts";
import type { PatchContext } from "./envoy_filter_select.ts";

type Obj = Record<string, unknown>;

const ROUTE_CONFIGURATION = "envoy.config.route.v3.RouteConfiguration";
const VIRTUAL_HOST = "envoy.config.route.v3.VirtualHost";
const ROUTE = "envoy.config.route.v3.Route";
const ACTIONS = { ROUTE: "route", REDIRECT: "redirect", DIRECT_RESPONSE: "direct_response" } as const;

const asList = (v: unknown): Obj[] => (Array.isArray(v) ? v as Obj[] : []);

/** The context of an RDS route configuration: a gateway's, else a sidecar's outbound side. */
export function routeContext(proxyType: string): PatchContext {
  return proxyType === "router" ? "GATEWAY" : "SIDECAR_OUTBOUND";
}

/**
 * The port of a route configuration: a sidecar's outbound one is named by its port, an inbound one (inline in
 * `virtualInbound`) after its cluster `inbound|<port>||`, a gateway's `http.<port>` or `https.<port>.…`.
 */
function routePort(name: string): number {
  if (name.startsWith("inbound|")) return Number(name.split("|")[1]);
  const [first, second] = name.split(".");
  return Number(first === "http" || first === "https" ? second : first);
}

/**
 * True when `patch`'s route configuration match selects the one called `name`: by name and port; a sidecar's
 * ignore `gateway` and `portName` as the reference's, a gateway's match neither yet (its names lack them).
 */
export function routeConfigMatches(patch: EnvoyConfigObjectPatch, name: string): boolean {
  const match = patch.match?.routeConfiguration;
  if (match === undefined) return true;
  const gateway = /^(http|https|tls|tcp)\./.test(name);
  if (gateway && (match.gateway || match.portName)) return false;
  if (match.name && match.name !== name) return false;
  if (match.portNumber && match.portNumber !== routePort(name)) return false;
  return true;
}

function routeMatches(patch: EnvoyConfigObjectPatch, route: Obj): boolean {
  const match = patch.match?.routeConfiguration?.vhost?.route;
  if (match === undefined) return true;
  if (match.name && match.name !== route.name) return false;
  if (match.action && match.action !== "ANY" && !(ACTIONS[match.action] in route)) return false;
  return true;
}

/** `config` after `patch`: ROUTE_CONFIGURATION MERGE, VIRTUAL_HOST and HTTP_ROUTE list operations. */
export function patchRouteConfig(config: Obj, patch: EnvoyConfigObjectPatch, root: protobuf.Root): Obj {
  if (!routeConfigMatches(patch, String(config.name))) return config;
  const vhost = patch.match?.routeConfiguration?.vhost?.name;
  const hostMatches = (h: Obj) => !vhost || h.name === vhost;
  switch (patch.applyTo) {
    case "ROUTE_CONFIGURATION": {
      if (patch.patch.operation !== "MERGE") return config;
      const type = root.lookupType(ROUTE_CONFIGURATION);
      return mergeInto(type, config, patchObject(type, patch.patch.value ?? {}, root), root);
    }
    case "VIRTUAL_HOST":
      if (!["MERGE", "REMOVE", "ADD"].includes(patch.patch.operation)) return config;
      return {
        ...config,
        virtual_hosts: patchTypedList(
          asList(config.virtual_hosts),
          patch,
          true,
          hostMatches,
          VIRTUAL_HOST,
          root,
        ),
      };
    case "HTTP_ROUTE": {
      // The reference replaces no routes; without a route match, inserts go to either end.
      if (patch.patch.operation === "REPLACE") return config;
      const hasMatch = patch.match?.routeConfiguration?.vhost?.route !== undefined;
      const hosts = asList(config.virtual_hosts).map((h) =>
        hostMatches(h)
          ? {
            ...h,
            routes: patchTypedList(
              asList(h.routes),
              patch,
              hasMatch,
              (r) => routeMatches(patch, r),
              ROUTE,
              root,
            ),
          }
          : h
      );
      return { ...config, virtual_hosts: hosts };
    }
    default:
      return config;
  }
}
