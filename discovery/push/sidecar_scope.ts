import type { Resource } from "@mesh/shared/config/resource";
import type { Destination } from "@mesh/shared/config/networking/destination";
import type { SidecarSpec } from "@mesh/shared/config/networking/sidecar";
import type {
  IstioEgressListener,
  IstioIngressListener,
} from "@mesh/shared/config/networking/sidecar_listeners";
import type { Port } from "@mesh/shared/config/networking/port";
import { resourceName } from "../model/config_order.ts";
import { deepFreeze } from "../model/deep_freeze.ts";
import { hostsMatch } from "../model/host_match.ts";
import type { Service } from "../model/service.ts";
import { uniqueByHostname } from "./service_index.ts";
import type { IndexedVirtualService } from "./virtual_service_index.ts";

/** One `namespace/host` entry of an egress listener; namespace is a name, `*` or `~` (`.` resolved). */
export interface EgressHost {
  /** Namespace the host is imported from: a name, or `*` for any (`.` is already resolved). */
  readonly namespace: string;
  /** Host name pattern; `*` wildcards allowed. */
  readonly host: string;
}

/** What one egress listener of a scope reaches. */
export interface EgressScope {
  /** The port the listener binds; absent for the catch-all listener. */
  readonly port?: Port;
  /** The address the listener binds; absent means the default. */
  readonly bind?: string;
  /** How traffic reaches the listener; absent means the default. */
  readonly captureMode?: IstioEgressListener["captureMode"];
  /** The listener's `namespace/host` entries. */
  readonly hosts: readonly EgressHost[];
  /** Services the listener imports, one per hostname (the proxy's namespace's definition preferred). */
  readonly services: readonly Service[];
  /** VirtualServices bound to `mesh` the listener imports. */
  readonly virtualServices: readonly IndexedVirtualService[];
}

/** The outbound traffic policy in effect for a scope. */
export interface ScopeTrafficPolicy {
  /** The Sidecar's mode, else the mesh's: `REGISTRY_ONLY` blocks hosts outside the registry. */
  readonly mode: "ALLOW_ANY" | "REGISTRY_ONLY";
  /** Where traffic to unknown hosts goes in `ALLOW_ANY` mode, from the Sidecar. */
  readonly egressProxy?: Destination;
}

/**
 * What a workload's sidecar sees: the Sidecar resource that applies (or the namespace default), its egress
 * listeners with the services and virtual services they import, ingress listeners and outbound policy.
 */
export interface SidecarScope {
  /** `namespace/name` of the Sidecar, or `default` when none applies. */
  readonly name: string;
  /** The namespace the scope was computed for (the proxy's). */
  readonly namespace: string;
  /** The Sidecar resource the scope comes from; absent for the default scope. */
  readonly sidecar?: Resource<SidecarSpec>;
  /** One entry per egress listener, in the Sidecar's order; one catch-all for the default scope. */
  readonly egress: readonly EgressScope[];
  /** Services of all egress listeners, one per hostname. */
  readonly services: readonly Service[];
  /** VirtualServices of all egress listeners, oldest first. */
  readonly virtualServices: readonly IndexedVirtualService[];
  /** The Sidecar's ingress listeners; empty for the default scope. */
  readonly ingress: readonly IstioIngressListener[];
  /** The outbound traffic policy in effect. */
  readonly outboundTrafficPolicy: ScopeTrafficPolicy;
}

/** What a scope is computed from. */
export interface ScopeInputs {
  /** Services visible from the proxy's namespace. */
  readonly services: readonly Service[];
  /** `mesh` VirtualServices visible from the proxy's namespace. */
  readonly virtualServices: readonly IndexedVirtualService[];
  /** Mesh `outboundTrafficPolicy.mode`. */
  readonly meshOutboundMode: "ALLOW_ANY" | "REGISTRY_ONLY";
}

/** Parses `ns/host` egress entries; `.` becomes `namespace`, a missing namespace means `*`. */
export function parseEgressHosts(hosts: readonly string[], namespace: string): EgressHost[] {
  return hosts.map((entry) => {
    const slash = entry.indexOf("/");
    const ns = slash < 0 ? "*" : entry.slice(0, slash);
    return { namespace: ns === "." ? namespace : ns, host: slash < 0 ? entry : entry.slice(slash + 1) };
  });
}

/** The scope of a namespace without a Sidecar: everything visible, one catch-all egress listener. */
export function defaultSidecarScope(namespace: string, inputs: ScopeInputs): SidecarScope {
  const services = uniqueByHostname(inputs.services, namespace);
  return deepFreeze({
    name: "default",
    namespace,
    egress: [{ hosts: [{ namespace: "*", host: "*" }], services, virtualServices: inputs.virtualServices }],
    services,
    virtualServices: inputs.virtualServices,
    ingress: [],
    outboundTrafficPolicy: { mode: inputs.meshOutboundMode },
  });
}

/** The scope a Sidecar resource gives workloads of `namespace`. */
export function sidecarScopeOf(
  sidecar: Resource<SidecarSpec>,
  namespace: string,
  inputs: ScopeInputs,
): SidecarScope {
  const egress = (sidecar.spec.egress ?? []).map((listener): EgressScope => {
    const hosts = parseEgressHosts(listener.hosts, namespace);
    return {
      ...(listener.port ? { port: listener.port } : {}),
      ...(listener.bind ? { bind: listener.bind } : {}),
      ...(listener.captureMode ? { captureMode: listener.captureMode } : {}),
      hosts,
      services: uniqueByHostname(selectServices(inputs.services, hosts), namespace),
      virtualServices: inputs.virtualServices.filter((vs) =>
        vs.hosts.some((h) =>
          hosts.some((e) => namespaceImported(e, vs.resource.meta.namespace) && hostsMatch(e.host, h))
        )
      ),
    };
  });
  const seen = new Set<IndexedVirtualService>();
  const virtualServices = inputs.virtualServices.filter((vs) =>
    egress.some((e) => e.virtualServices.includes(vs)) && !seen.has(vs) && seen.add(vs)
  );
  const policy = sidecar.spec.outboundTrafficPolicy;
  return deepFreeze({
    name: resourceName(sidecar),
    namespace,
    sidecar,
    egress,
    services: uniqueByHostname(
      inputs.services.filter((s) => egress.some((e) => e.services.includes(s))),
      namespace,
    ),
    virtualServices,
    ingress: sidecar.spec.ingress ?? [],
    outboundTrafficPolicy: {
      mode: policy?.mode ?? inputs.meshOutboundMode,
      ...(policy?.egressProxy ? { egressProxy: policy.egressProxy } : {}),
    },
  });
}

function namespaceImported(entry: EgressHost, namespace: string): boolean {
  return entry.namespace === "*" || entry.namespace === namespace;
}

/**
 * Services an egress listener imports, as Istio: a service whose namespace is named explicitly is matched only
 * against that namespace's hosts; otherwise against the `*` namespace's hosts.
 */
function selectServices(services: readonly Service[], hosts: readonly EgressHost[]): Service[] {
  return services.filter((s) => {
    const explicit = hosts.filter((h) => h.namespace === s.namespace);
    const candidates = explicit.length > 0 ? explicit : hosts.filter((h) => h.namespace === "*");
    return candidates.some((h) => hostsMatch(h.host, s.hostname));
  });
}
