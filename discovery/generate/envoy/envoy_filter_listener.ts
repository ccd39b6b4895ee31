/**
 * EnvoyFilter LISTENER, FILTER_CHAIN, NETWORK_FILTER and HTTP_FILTER patches on a generated listener: which
 * listener, filter chain, network filter and HTTP filter a patch's match selects, and what its operation does.
 * HTTP filters are those of the chain's HTTP connection manager. Route patches also reach the route
 * configurations inline in `virtualInbound` (the sidecar's inbound side has no RDS). LISTENER ADD makes a new listener from the
 * patch value (see the generator wrapper).
 *
 * @module
 */
import type protobuf from "protobufjs";
import type { EnvoyConfigObjectPatch } from "@mesh/shared/config/networking/envoy_filter";
import type { EnvoyConfigObjectMatch } from "@mesh/shared/config/networking/envoy_filter_match";
import { mergeInto, patchObject } from "./proto_merge.ts";
import { patchTypedList } from "./envoy_filter_list.ts";
import { filterNameMatches } from "./envoy_filter_names.ts";
import { patchRouteConfig } from "./envoy_filter_route.ts";
import type { PatchContext } from "./envoy_filter_select.ts";

type Obj = Record<string, unknown>;
type ChainMatch = NonNullable<NonNullable<EnvoyConfigObjectMatch["listener"]>["filterChain"]>;

const LISTENER = "envoy.config.listener.v3.Listener";
const FILTER_CHAIN = "envoy.config.listener.v3.FilterChain";
const FILTER = "envoy.config.listener.v3.Filter";
const HTTP_FILTER = "envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter";
const HCM = "envoy.filters.network.http_connection_manager";

const asObj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? v as Obj : {});
const asList = (v: unknown): Obj[] => (Array.isArray(v) ? v as Obj[] : []);

/** The context of a sidecar's or gateway's listener: a sidecar's `virtualInbound` is its inbound side. */
export function listenerContext(proxyType: string, name: string): PatchContext {
  if (proxyType === "router") return "GATEWAY";
  return name === "virtualInbound" ? "SIDECAR_INBOUND" : "SIDECAR_OUTBOUND";
}

function portOf(listener: Obj): number | undefined {
  const port = asObj(asObj(listener.address).socket_address).port_value;
  return typeof port === "number" ? port : undefined;
}

const VIRTUAL = new Set(["virtualInbound", "virtualOutbound"]);

/**
 * True when `patch`'s listener match (name, port) selects `listener`. Below the listener level, the port of a
 * virtual listener is matched against its filter chains' destination ports instead ({@link chainMatches}).
 */
export function listenerMatches(patch: EnvoyConfigObjectPatch, listener: Obj): boolean {
  const match = patch.match?.listener;
  if (match === undefined) return true;
  if (match.name && match.name !== listener.name) return false;
  if (patch.applyTo !== "LISTENER" && VIRTUAL.has(String(listener.name))) return true;
  if (match.portNumber && match.portNumber !== portOf(listener)) return false;
  return true;
}

function chainMatches(
  listener: Obj,
  port: number | undefined,
  match: ChainMatch | undefined,
  chain: Obj,
): boolean {
  const fcm = asObj(chain.filter_chain_match);
  const destination = asObj(fcm.destination_port).value;
  if (port && VIRTUAL.has(String(listener.name)) && destination !== port) return false;
  if (match === undefined) return true;
  if (match.name && match.name !== chain.name) return false;
  if (match.sni && !asList(fcm.server_names).includes(match.sni as never)) return false;
  if (match.transportProtocol && match.transportProtocol !== (fcm.transport_protocol ?? "")) return false;
  if (match.applicationProtocols) {
    const offered = asList(fcm.application_protocols) as unknown[];
    if (!match.applicationProtocols.split(",").every((p) => offered.includes(p.trim()))) return false;
  }
  if (match.destinationPort && match.destinationPort !== destination) return false;
  return true;
}

function patchHttpFilters(chain: Obj, patch: EnvoyConfigObjectPatch, root: protobuf.Root): Obj {
  const sub = patch.match?.listener?.filterChain?.filter?.subFilter?.name;
  const filters = asList(chain.filters).map((filter) => {
    if (!filterNameMatches(HCM, filter.name)) return filter;
    const hcm = asObj(filter.typed_config);
    const http = patchTypedList(
      asList(hcm.http_filters),
      patch,
      !!sub,
      (f) => !sub || filterNameMatches(sub, f.name),
      HTTP_FILTER,
      root,
    );
    return { ...filter, typed_config: { ...hcm, http_filters: http } };
  });
  return { ...chain, filters };
}

/** The route configurations inline in the chain's HTTP connection managers (a sidecar's inbound side). */
function patchInlineRoutes(chain: Obj, patch: EnvoyConfigObjectPatch, root: protobuf.Root): Obj {
  const filters = asList(chain.filters).map((filter) => {
    const hcm = asObj(filter.typed_config);
    if (!filterNameMatches(HCM, filter.name) || hcm.route_config === undefined) return filter;
    const routes = patchRouteConfig(asObj(hcm.route_config), patch, root);
    return routes === hcm.route_config
      ? filter
      : { ...filter, typed_config: { ...hcm, route_config: routes } };
  });
  return { ...chain, filters };
}

function patchChain(chain: Obj, patch: EnvoyConfigObjectPatch, root: protobuf.Root): Obj {
  if (patch.applyTo === "HTTP_FILTER") return patchHttpFilters(chain, patch, root);
  const name = patch.match?.listener?.filterChain?.filter?.name;
  const filters = patchTypedList(
    asList(chain.filters),
    patch,
    !!name,
    (f) => !name || filterNameMatches(name, f.name),
    FILTER,
    root,
  );
  return { ...chain, filters };
}

/**
 * `listener` after `patch` (undefined: removed): LISTENER MERGE/REMOVE on it, FILTER_CHAIN MERGE/REMOVE/ADD
 * on its chains, NETWORK_FILTER and HTTP_FILTER operations inside its matching chains.
 */
export function patchListener(
  listener: Obj,
  patch: EnvoyConfigObjectPatch,
  root: protobuf.Root,
): Obj | undefined {
  if (!listenerMatches(patch, listener)) return listener;
  const { operation } = patch.patch;
  const chainMatch = patch.match?.listener?.filterChain;
  const port = patch.match?.listener?.portNumber;
  switch (patch.applyTo) {
    case "LISTENER": {
      if (operation === "REMOVE") return undefined;
      if (operation !== "MERGE") return listener;
      const type = root.lookupType(LISTENER);
      return mergeInto(type, listener, patchObject(type, patch.patch.value ?? {}, root), root);
    }
    case "FILTER_CHAIN": {
      if (!["MERGE", "REMOVE", "ADD"].includes(operation)) return listener;
      const chains = patchTypedList(
        asList(listener.filter_chains),
        patch,
        true,
        (c) => chainMatches(listener, port, chainMatch, c),
        FILTER_CHAIN,
        root,
      );
      return { ...listener, filter_chains: chains };
    }
    case "NETWORK_FILTER":
    case "HTTP_FILTER": {
      const chains = asList(listener.filter_chains).map((c) =>
        chainMatches(listener, port, chainMatch, c) ? patchChain(c, patch, root) : c
      );
      return { ...listener, filter_chains: chains };
    }
    case "ROUTE_CONFIGURATION":
    case "VIRTUAL_HOST":
    case "HTTP_ROUTE": {
      // The reference patches inline route configurations on a sidecar's inbound side only.
      if (listener.name !== "virtualInbound") return listener;
      const chains = asList(listener.filter_chains).map((c) => patchInlineRoutes(c, patch, root));
      return { ...listener, filter_chains: chains };
    }
    default:
      return listener;
  }
}
