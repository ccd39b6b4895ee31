import type { Resource } from "@mesh/shared/config/resource";
import type { MeshConfig } from "@mesh/shared/config/mesh/mesh_config";
import type { SidecarSpec } from "@mesh/shared/config/networking/sidecar";
import { KINDS } from "@mesh/shared/config/kinds";
import type { ConfigStore } from "../model/config_store.ts";
import { compareByCreation, resourceName } from "../model/config_order.ts";
import { selectorIsEmpty, selectorMatches } from "../model/labels.ts";
import type { Proxy } from "../model/proxy.ts";
import type { Service } from "../model/service.ts";
import type { SecretStore } from "../model/secret_store.ts";
import type { ServiceDiscovery } from "../registry/service_registry.ts";
import { DestinationRuleIndex, type MergedDestinationRule } from "./destination_rule_index.ts";
import { EndpointIndex } from "./endpoint_index.ts";
import type { EndpointSnapshot } from "./endpoint_snapshot.ts";
import { GatewayIndex, type IndexedGateway } from "./gateway_index.ts";
import { PushProblems } from "./push_problems.ts";
import { outboundClusterName, ServiceIndex } from "./service_index.ts";
import { defaultSidecarScope, type ScopeInputs, type SidecarScope, sidecarScopeOf } from "./sidecar_scope.ts";
import { type IndexedVirtualService, VirtualServiceIndex } from "./virtual_service_index.ts";
import { ClusterNameMemo } from "./cluster_names.ts";
import { DerivedMemo } from "./derived_memo.ts";
import { MeshNetworkIndex } from "./network_index.ts";
import { deepFreeze } from "../model/deep_freeze.ts";
import type { MemoStats } from "@mesh/shared/memo/memo_stats";

/** The mesh settings a snapshot reads. */
export type PushMeshConfig =
  & Pick<
    MeshConfig,
    | "rootNamespace"
    | "defaultServiceExportTo"
    | "defaultVirtualServiceExportTo"
    | "defaultDestinationRuleExportTo"
    | "outboundTrafficPolicy"
    | "enableAutoMtls"
    | "trustDomain"
    | "localityLbSetting"
    | "protocolDetectionTimeout"
  >
  & TelemetryMeshConfig;

/** Which of the reference's networking plugins put their filters into listeners (`--plugins`). */
export interface ListenerPlugins {
  /** `authn`: sidecars' inbound mesh mTLS by PeerAuthentication, and JWT checks by RequestAuthentication. */
  readonly authn: boolean;
  /** `authz`: RBAC filters from AuthorizationPolicies. */
  readonly authz: boolean;
  /** `metadata_exchange`: the peer metadata exchange filters on HTTP and TCP chains. */
  readonly metadataExchange: boolean;
}

/** The reference's default plugins (`authn`, `authz`, `health`): every security filter, no metadata exchange. */
export const DEFAULT_LISTENER_PLUGINS: ListenerPlugins = Object.freeze({
  authn: true,
  authz: true,
  metadataExchange: false,
});

/** The mesh's logging and tracing settings; absent ones take the mesh config's defaults. */
export type TelemetryMeshConfig =
  & Partial<
    Pick<
      MeshConfig,
      | "enableTracing"
      | "accessLogFile"
      | "accessLogFormat"
      | "accessLogEncoding"
      | "enableEnvoyAccessLogService"
      | "disableEnvoyListenerLog"
    >
  >
  & { readonly defaultConfig?: Pick<MeshConfig["defaultConfig"], "tracing"> };

/** Whether listeners detect HTTP on ports of undeclared protocol, and how long inbound ones wait for bytes. */
export interface ProtocolSniffing {
  /** `DISCOVERY_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND`. */
  readonly outbound: boolean;
  /** `DISCOVERY_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND`. */
  readonly inbound: boolean;
  /** `DISCOVERY_INBOUND_PROTOCOL_DETECTION_TIMEOUT`, milliseconds. */
  readonly inboundTimeoutMs: number;
}

/** How sidecars' outbound HTTP connection managers treat requests. */
export interface OutboundHttpOptions {
  /** `DISCOVERY_HTTP10`: accept HTTP/1.0 requests. */
  readonly http10: boolean;
  /** `DISCOVERY_SIDECAR_USE_REMOTE_ADDRESS`: trust the connection's address, not X-Forwarded-For. */
  readonly useRemoteAddress: boolean;
}

/** Which protocols' ports get Envoy's protocol-aware network filter instead of plain TCP proxying. */
export interface ProtocolFilterOptions {
  /** `DISCOVERY_ENABLE_REDIS_FILTER`: redis_proxy on Redis ports, and Maglev balancing on their clusters. */
  readonly redis: boolean;
  /** `DISCOVERY_ENABLE_MYSQL_FILTER`: mysql_proxy (statistics) before the TCP proxy on MySQL ports. */
  readonly mysql: boolean;
  /** `DISCOVERY_ENABLE_THRIFT_FILTER`: thrift_proxy on Thrift ports. */
  readonly thrift: boolean;
}

/** All off, as the reference's defaults have them. */
export const NO_PROTOCOL_FILTERS: ProtocolFilterOptions = Object.freeze({
  redis: false,
  mysql: false,
  thrift: false,
});

/** Sniffing as the reference's defaults have it. */
export const DEFAULT_PROTOCOL_SNIFFING: ProtocolSniffing = Object.freeze({
  outbound: true,
  inbound: true,
  inboundTimeoutMs: 1_000,
});

/** Everything a snapshot is built from. */
export interface PushContextInputs {
  /** Where the config resources are read from, once, at build time. */
  readonly store: ConfigStore;
  /** The services (and, through the endpoint index, endpoints) of every registry. */
  readonly services: ServiceDiscovery;
  /** The mesh settings the snapshot reads. */
  readonly mesh: PushMeshConfig;
  /** `--domain`, for short host names in VirtualServices and DestinationRules. */
  readonly domain: string;
  /** DISCOVERY_SCOPE_GATEWAY_TO_NAMESPACE (default false). */
  readonly scopeGatewayToNamespace?: boolean;
  /** Where gateway credentials (`credentialName`) come from; absent: none. */
  readonly secrets?: SecretStore;
  /** DISCOVERY_ENABLE_VIRTUAL_SERVICE_DELEGATE (default true). */
  readonly enableVirtualServiceDelegate?: boolean;
  /** Protocol sniffing of ports whose protocol is not declared (default: both directions, 1 s inbound). */
  readonly protocolSniffing?: ProtocolSniffing;
  /** Outbound HTTP settings of sidecars (default: both off). */
  readonly outboundHttp?: OutboundHttpOptions;
  /** Protocol-aware network filters (default: all off). */
  readonly protocolFilters?: ProtocolFilterOptions;
  /** `DISCOVERY_INITIAL_FETCH_TIMEOUT`, nanoseconds; absent (the default): the proxy's own default applies. */
  readonly initialFetchTimeoutNs?: bigint;
  /** `DISCOVERY_FILTER_GATEWAY_CLUSTER_CONFIG` (default false). */
  readonly filterGatewayClusters?: boolean;
  /** `DISCOVERY_TRACE_SAMPLING`, percent (default 100). */
  readonly traceSampling?: number;
  /** `DISCOVERY_SIDECAR_ENABLE_INBOUND_TLS_V2` (default true). */
  readonly inboundTlsV2?: boolean;
  /** `DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE` (default true). */
  readonly tcpMetadataExchange?: boolean;
  /** `DISCOVERY_ENDPOINT_TELEMETRY_LABEL` (default false). */
  readonly endpointTelemetryLabel?: boolean;
  /** `DISCOVERY_ENABLE_HEADLESS_SERVICE_POD_LISTENERS` (default true). */
  readonly headlessPodListeners?: boolean;
  /** `DISCOVERY_ALLOW_METADATA_CERTS_DR_MUTUAL_TLS` (default false). */
  readonly allowMetadataCerts?: boolean;
  /** `MESH_DEFAULT_REQUEST_TIMEOUT`, nanoseconds (default 0: none). */
  readonly defaultRequestTimeoutNs?: bigint;
  /** `--plugins` (default: the reference's). */
  readonly plugins?: ListenerPlugins;
  /**
   * Versioned endpoints kept current by registry events; a private one is made when absent. The snapshot
   * primes it with the services it lists, then keeps the endpoint snapshot it publishes.
   */
  readonly endpoints?: EndpointIndex;
  /** The mesh networks with their gateways; none (one flat network) when absent. */
  readonly networks?: MeshNetworkIndex;
  /** The generators' memo, with the tables the previous snapshot carried; a fresh one when absent. */
  readonly derived?: DerivedMemo;
  /** Version of the snapshot; defaults to its creation time. */
  readonly version?: string;
  /** The clock for `createdAt`; tests pass a fixed one. */
  readonly now?: () => Date;
}

/** What {@link PushContext.withEndpoints} copies a snapshot from. */
interface EndpointsCopy {
  readonly copyOf: PushContext;
  readonly endpoints: EndpointSnapshot;
}

/**
 * One immutable snapshot of the mesh for generators: services, VirtualServices, DestinationRules, Sidecars,
 * Gateways and every other config kind as they were when it was built, indexed for per-proxy questions.
 * Per-namespace answers are computed on first use and cached; they never change afterwards.
 */
export class PushContext {
  /** Version of the snapshot, sent as the xDS version; the creation time unless given. */
  readonly version: string;
  /** When the snapshot was built (ISO 8601). */
  readonly createdAt: string;
  /** The mesh settings the snapshot was built with. */
  readonly mesh: PushMeshConfig;
  /** Protocol sniffing of undeclared ports, read by listener and route generators. */
  readonly protocolSniffing: ProtocolSniffing;
  /** Outbound HTTP settings of sidecars, read by the listener generator. */
  readonly outboundHttp: OutboundHttpOptions;
  /** Protocol-aware network filters, read by the listener and cluster generators. */
  readonly protocolFilters: ProtocolFilterOptions;
  /**
   * `initial_fetch_timeout` of the EDS config source of generated clusters, nanoseconds; absent when the
   * setting was not given, so the field is left out and Envoy's own default applies, as the reference does.
   */
  readonly initialFetchTimeoutNs?: bigint;
  /** Gateways get only the clusters of the destinations of the VirtualServices bound to them. */
  readonly filterGatewayClusters: boolean;
  /** The share of requests traced when a proxy's ProxyConfig names none, percent. */
  readonly traceSampling: number;
  /** Sidecars' inbound mesh mTLS takes TLS 1.2 and up with the reference's strong ciphers only. */
  readonly inboundTlsV2: boolean;
  /** Mesh mTLS offers and accepts `istio-peer-exchange`, and mesh TCP chains exchange peer metadata. */
  readonly tcpMetadataExchange: boolean;
  /** Envoy EDS endpoints carry their workload's name, namespace and canonical service for telemetry. */
  readonly endpointTelemetryLabel: boolean;
  /** Sidecars get an outbound listener per endpoint IP of a headless service's TCP ports. */
  readonly headlessPodListeners: boolean;
  /** Certificate files in a proxy's metadata replace those of DestinationRules' `MUTUAL` TLS. */
  readonly allowMetadataCerts: boolean;
  /** The timeout of VirtualService routes that set none, nanoseconds; 0 leaves them without one. */
  readonly defaultRequestTimeoutNs: bigint;
  /** The networking plugins whose filters listeners carry. */
  readonly plugins: ListenerPlugins;
  /** Services, one per hostname and namespace. */
  readonly serviceIndex: ServiceIndex;
  /** VirtualServices by gateway, with delegates merged. */
  readonly virtualServiceIndex: VirtualServiceIndex;
  /** DestinationRules by namespace and host, with Istio's lookup precedence. */
  readonly destinationRuleIndex: DestinationRuleIndex;
  /** Gateways by the workload labels their selectors match. */
  readonly gatewayIndex: GatewayIndex;
  /**
   * The endpoints as of this snapshot, frozen. An endpoint-only change does not rebuild the snapshot: it gets
   * a copy with the newer endpoints ({@link PushContext.withEndpoints}).
   */
  readonly endpointIndex: EndpointSnapshot;
  /** Networks of endpoints and proxies, and the gateways between networks (split-horizon EDS). */
  readonly networks: MeshNetworkIndex;
  /** Problems found while building the snapshot (duplicates, conflicts); frozen once built. */
  readonly problems: PushProblems;
  /** Cluster names proxies asked for, parsed; bounded by bytes, and gone with the snapshot. */
  readonly clusterNames = new ClusterNameMemo();
  /**
   * The snapshot this one copies with newer endpoints, or itself when built: the owner of what generators
   * derive from the configuration, so an endpoint-only push keeps the plans of the snapshot it copies. What
   * is derived from endpoints keys itself by their versions or the endpoint generation.
   */
  readonly configSnapshot: PushContext;
  /** What generators derive from this snapshot (plans, encoded parts, indexes); gone with it. */
  readonly derived: DerivedMemo;
  /**
   * Gateway credentials. Read live, not frozen: a generator that reads a secret puts its digest in the cache
   * key, and every change to the store triggers a full push.
   */
  readonly secrets?: SecretStore;
  readonly #configs: ReadonlyMap<string, readonly Resource[]>;
  /** Sidecars by namespace, oldest first. */
  readonly #sidecars = new Map<string, Resource<SidecarSpec>[]>();
  readonly #scopes = new Map<string, SidecarScope>();
  readonly #scopeByProxy = new WeakMap<Proxy, SidecarScope>();
  #sharedDefaultScope?: SidecarScope;
  readonly #views = new Map<string, string>();
  readonly #hostIndexes = new WeakMap<readonly Service[], Map<string, Service>>();
  readonly #buildMs: number;

  /** Use {@link buildPushContext}, or {@link PushContext.withEndpoints} for a copy with newer endpoints. */
  constructor(inputs: PushContextInputs | EndpointsCopy) {
    if ("copyOf" in inputs) {
      // Everything but the endpoints is shared, memos included: none of them reads endpoints, or each keys
      // what it derives from them by the endpoints' versions.
      const from = inputs.copyOf;
      this.endpointIndex = inputs.endpoints;
      this.configSnapshot = from.configSnapshot;
      this.version = from.version;
      this.createdAt = from.createdAt;
      this.mesh = from.mesh;
      this.protocolSniffing = from.protocolSniffing;
      this.outboundHttp = from.outboundHttp;
      this.protocolFilters = from.protocolFilters;
      this.filterGatewayClusters = from.filterGatewayClusters;
      this.traceSampling = from.traceSampling;
      this.inboundTlsV2 = from.inboundTlsV2;
      this.tcpMetadataExchange = from.tcpMetadataExchange;
      this.endpointTelemetryLabel = from.endpointTelemetryLabel;
      this.headlessPodListeners = from.headlessPodListeners;
      this.allowMetadataCerts = from.allowMetadataCerts;
      this.defaultRequestTimeoutNs = from.defaultRequestTimeoutNs;
      this.plugins = from.plugins;
      this.serviceIndex = from.serviceIndex;
      this.virtualServiceIndex = from.virtualServiceIndex;
      this.destinationRuleIndex = from.destinationRuleIndex;
      this.gatewayIndex = from.gatewayIndex;
      this.networks = from.networks;
      this.problems = from.problems;
      this.derived = from.derived;
      this.clusterNames = from.clusterNames;
      if (from.initialFetchTimeoutNs !== undefined) this.initialFetchTimeoutNs = from.initialFetchTimeoutNs;
      if (from.secrets) this.secrets = from.secrets;
      this.#configs = from.#configs;
      this.#sidecars = from.#sidecars;
      this.#scopes = from.#scopes;
      this.#scopeByProxy = from.#scopeByProxy;
      this.#sharedDefaultScope = from.#sharedDefaultScope;
      this.#views = from.#views;
      this.#hostIndexes = from.#hostIndexes;
      this.#buildMs = from.#buildMs;
      Object.freeze(this);
      return;
    }
    const started = performance.now();
    this.configSnapshot = this;
    const now = inputs.now ?? (() => new Date());
    this.createdAt = now().toISOString();
    this.version = inputs.version ?? this.createdAt;
    this.mesh = deepFreeze(inputs.mesh);
    this.protocolSniffing = inputs.protocolSniffing ?? DEFAULT_PROTOCOL_SNIFFING;
    this.outboundHttp = inputs.outboundHttp ?? Object.freeze({ http10: false, useRemoteAddress: false });
    this.protocolFilters = inputs.protocolFilters ?? NO_PROTOCOL_FILTERS;
    if (inputs.initialFetchTimeoutNs !== undefined) this.initialFetchTimeoutNs = inputs.initialFetchTimeoutNs;
    this.filterGatewayClusters = inputs.filterGatewayClusters ?? false;
    this.traceSampling = inputs.traceSampling ?? 100;
    this.inboundTlsV2 = inputs.inboundTlsV2 ?? true;
    this.tcpMetadataExchange = inputs.tcpMetadataExchange ?? true;
    this.endpointTelemetryLabel = inputs.endpointTelemetryLabel ?? false;
    this.headlessPodListeners = inputs.headlessPodListeners ?? true;
    this.allowMetadataCerts = inputs.allowMetadataCerts ?? false;
    this.defaultRequestTimeoutNs = inputs.defaultRequestTimeoutNs ?? 0n;
    this.plugins = inputs.plugins ?? DEFAULT_LISTENER_PLUGINS;
    this.problems = new PushProblems();
    this.#configs = new Map(KINDS.map((k) => [k.kind, inputs.store.list(k.kind)]));
    this.serviceIndex = new ServiceIndex(inputs.services.services(), this.problems);
    this.virtualServiceIndex = new VirtualServiceIndex(this.configs("VirtualService"), {
      domain: inputs.domain,
      defaultExportTo: inputs.mesh.defaultVirtualServiceExportTo,
      enableDelegates: inputs.enableVirtualServiceDelegate ?? true,
    }, this.problems);
    this.destinationRuleIndex = new DestinationRuleIndex(this.configs("DestinationRule"), {
      domain: inputs.domain,
      rootNamespace: inputs.mesh.rootNamespace,
      defaultExportTo: inputs.mesh.defaultDestinationRuleExportTo,
    }, this.problems);
    this.gatewayIndex = new GatewayIndex(this.configs("Gateway"), inputs.scopeGatewayToNamespace ?? false);
    for (const sidecar of [...this.configs("Sidecar")].sort(compareByCreation)) {
      const list = this.#sidecars.get(sidecar.meta.namespace) ?? [];
      list.push(sidecar as Resource<SidecarSpec>);
      this.#sidecars.set(sidecar.meta.namespace, list);
    }
    const endpoints = inputs.endpoints ?? new EndpointIndex(inputs.services);
    endpoints.prime(this.serviceIndex.all);
    this.endpointIndex = endpoints.snapshot();
    this.networks = inputs.networks ?? new MeshNetworkIndex({ networks: {} }, [], "");
    this.derived = inputs.derived ?? new DerivedMemo();
    if (inputs.secrets) this.secrets = inputs.secrets;
    this.#recordServicesWithoutEndpoints();
    this.problems.freeze();
    this.#buildMs = performance.now() - started;
    Object.freeze(this);
  }

  /**
   * This snapshot with `endpoints` in place of its own (the endpoint-only fast path): everything else, the
   * version and the memos included, is shared. Itself when they are its own already.
   */
  withEndpoints(endpoints: EndpointSnapshot): PushContext {
    return endpoints === this.endpointIndex ? this : new PushContext({ copyOf: this, endpoints });
  }

  /** What the snapshot's memos hold, for `/debug/cachez`. */
  memoStats(): Readonly<Record<string, MemoStats>> {
    return { clusterNames: this.clusterNames.stats() };
  }

  /** How many values each table of the generators' memo computed from this snapshot, for `/debug/cachez`. */
  derivedStats(): Readonly<Record<string, number>> {
    return this.derived.stats();
  }

  /** Resources of a config kind as of this snapshot, sorted by namespace then name. */
  configs(kind: string): readonly Resource[] {
    return this.#configs.get(kind) ?? [];
  }

  /** Every service, one per hostname and namespace. */
  services(): readonly Service[] {
    return this.serviceIndex.all;
  }

  /** The services a proxy can reach: exportTo visibility narrowed by its Sidecar's egress hosts. */
  servicesVisibleTo(proxy: Proxy): readonly Service[] {
    return this.sidecarScope(proxy).services;
  }

  /** The definition of `hostname` a proxy uses: from its scope, else any visible one. */
  serviceForHostname(proxy: Proxy, hostname: string): Service | undefined {
    return this.#scopeServicesByHostname(this.sidecarScope(proxy)).get(hostname) ??
      this.serviceIndex.lookup(hostname, proxy.namespace);
  }

  /**
   * A scope's services by hostname, built once per scope: route planning looks a destination up per route,
   * which as a scan of the scope cost O(routes × services) per proxy.
   */
  #scopeServicesByHostname(scope: SidecarScope): ReadonlyMap<string, Service> {
    // Keyed by the service list, which namespaces sharing one default scope share.
    let index = this.#hostIndexes.get(scope.services);
    if (index === undefined) {
      index = new Map();
      // A scope holds one service per hostname; keep the first should that ever not hold, as `find` did.
      for (const service of scope.services) {
        if (!index.has(service.hostname)) index.set(service.hostname, service);
      }
      this.#hostIndexes.set(scope.services, index);
    }
    return index;
  }

  /**
   * The Sidecar scope of a workload: the oldest Sidecar of its namespace whose selector matches its labels,
   * else its namespace's Sidecar without selector, else the root namespace's, else everything visible.
   * Gateways (routers) always get the namespace default.
   */
  sidecarScope(proxy: Proxy): SidecarScope {
    // Asked for several times per proxy and push (shape keys, generators): remembered per proxy object.
    let scope = this.#scopeByProxy.get(proxy);
    if (scope !== undefined) return scope;
    const sidecar = proxy.type === "sidecar" ? this.#sidecarFor(proxy) : undefined;
    const key = `${sidecar ? resourceName(sidecar) : ""}@${proxy.namespace}`;
    scope = this.#scopes.get(key);
    if (!scope) {
      scope = sidecar
        ? sidecarScopeOf(sidecar, proxy.namespace, this.#scopeInputs(proxy.namespace))
        : this.#defaultScope(proxy.namespace);
      this.#scopes.set(key, scope);
    }
    this.#scopeByProxy.set(proxy, scope);
    return scope;
  }

  /**
   * The scope of a namespace no Sidecar applies to. Namespaces that see the snapshot alike see the same services
   * and VirtualServices, so one scope is computed for all of them and only relabelled with each namespace:
   * computing it per namespace filtered every service once per namespace on every full push.
   */
  #defaultScope(namespace: string): SidecarScope {
    if (this.namespaceView(namespace) !== "") {
      return defaultSidecarScope(namespace, this.#scopeInputs(namespace));
    }
    this.#sharedDefaultScope ??= defaultSidecarScope(namespace, this.#scopeInputs(namespace));
    const shared = this.#sharedDefaultScope;
    return shared.namespace === namespace ? shared : Object.freeze({ ...shared, namespace });
  }

  #scopeInputs(namespace: string): ScopeInputs {
    return {
      services: this.serviceIndex.visibleFrom(namespace),
      virtualServices: this.virtualServiceIndex.forGateway("mesh", namespace),
      meshOutboundMode: this.mesh.outboundTrafficPolicy.mode ?? "ALLOW_ANY",
    };
  }

  /**
   * Which namespaces see this snapshot alike: `""` for a namespace that sees it exactly as any namespace no
   * config names would (no Sidecar applies, no exportTo or `sourceNamespace` names it, it defines no hostname
   * another namespace defines, its DestinationRules name only its own hosts and are exported everywhere), else
   * the namespace itself. Workloads of `""` namespaces that are otherwise alike get the same resources, which
   * lets a hundred namespaces share one generation. Anything a generator reads of the namespace beyond what
   * this push context answers (short names, for one) is the generator's to add to its shape.
   */
  namespaceView(namespace: string): string {
    let view = this.#views.get(namespace);
    if (view === undefined) {
      const singledOut = this.#sidecars.has(namespace) || this.#sidecars.has(this.mesh.rootNamespace) ||
        this.serviceIndex.singlesOut(namespace) || this.virtualServiceIndex.singlesOut(namespace) ||
        this.destinationRuleIndex.singlesOut(namespace, (host) => this.serviceIndex.ownerOf(host));
      view = singledOut ? namespace : "";
      this.#views.set(namespace, view);
    }
    return view;
  }

  /**
   * VirtualServices for a gateway name as a proxy sees them: for `mesh`, those its Sidecar scope imports; for
   * a gateway `namespace/name`, those bound to it and visible from the proxy's namespace. Oldest first.
   */
  virtualServicesFor(proxy: Proxy, gateway: string): readonly IndexedVirtualService[] {
    if (gateway === "mesh") return this.sidecarScope(proxy).virtualServices;
    return this.virtualServiceIndex.forGateway(gateway, proxy.namespace);
  }

  /** The DestinationRule a proxy applies to traffic for a service (namespace precedence as in Istio). */
  destinationRule(proxy: Proxy, service: Service | string): MergedDestinationRule | undefined {
    return typeof service === "string"
      ? this.destinationRuleIndex.lookup(proxy.namespace, service)
      : this.destinationRuleIndex.lookup(proxy.namespace, service.hostname, service.namespace);
  }

  /** Gateways whose selector matches the proxy's labels, oldest first. */
  gatewaysFor(proxy: Proxy): readonly IndexedGateway[] {
    return this.gatewayIndex.forProxy(proxy);
  }

  /** The `/debug/push_status` document: counts, problems by metric, timing. */
  pushStatus(): Record<string, unknown> {
    return {
      version: this.version,
      start: this.createdAt,
      buildMillis: Math.round(this.#buildMs * 1000) / 1000,
      discovery_services: this.serviceIndex.all.length,
      discovery_virt_services: this.virtualServiceIndex.all.length,
      ...this.problems.toJSON(),
    };
  }

  #sidecarFor(proxy: Proxy): Resource<SidecarSpec> | undefined {
    const own = this.#sidecars.get(proxy.namespace) ?? [];
    return own.find((s) =>
      !selectorIsEmpty(s.spec.workloadSelector?.labels) &&
      selectorMatches(s.spec.workloadSelector?.labels, proxy.metadata.labels)
    ) ??
      own.find((s) => selectorIsEmpty(s.spec.workloadSelector?.labels)) ??
      (this.#sidecars.get(this.mesh.rootNamespace) ?? []).find((s) =>
        selectorIsEmpty(s.spec.workloadSelector?.labels)
      );
  }

  #recordServicesWithoutEndpoints(): void {
    for (const service of this.serviceIndex.all) {
      // Only load-balanced services get their endpoints over EDS; DNS and passthrough ones need none.
      if (service.resolution !== "ClientSideLB") continue;
      const shards = this.endpointIndex.shards(service.hostname, service.namespace);
      for (const list of shards.byCluster.values()) {
        for (const { endpoint } of list) {
          if (endpoint.healthy) continue;
          this.problems.add(
            "discovery_endpoint_not_ready",
            `${endpoint.address}:${endpoint.endpointPort}`,
            `Endpoint ${endpoint.address}:${endpoint.endpointPort} of "${service.hostname}" is not ready`,
          );
        }
      }
      for (const port of service.ports) {
        const has = [...shards.byCluster.values()].some((list) =>
          list.some((i) => i.servicePort.port === port.port)
        );
        if (!has) {
          this.problems.add(
            "discovery_eds_no_instances",
            outboundClusterName(service.hostname, port.port),
            `Service "${service.hostname}" in namespace "${service.namespace}" has no endpoints for port ${port.port}`,
          );
        }
      }
    }
  }
}

/** Builds a frozen snapshot from the current config store, registries and mesh config. */
export function buildPushContext(inputs: PushContextInputs): PushContext {
  return new PushContext(inputs);
}
