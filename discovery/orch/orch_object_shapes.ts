/**
 * The orchestrator's core objects (Service, Endpoints, EndpointSlice, Pod, Node, Namespace) checked against the
 * shapes of `orch_objects.ts` before the registry stores them, so every conversion reads well-typed fields: what
 * is valid is kept, a field or list entry of the wrong shape is left out and reported by path, and an object
 * that cannot be keyed is refused whole. Fields the mesh does not read are passed on untouched (the registry
 * lends its objects to analysis).
 *
 * @module
 */
import type {
  OrchEndpointAddress,
  OrchEndpoints,
  OrchEndpointSlice,
  OrchNamespace,
  OrchNode,
  OrchPod,
  OrchService,
} from "./orch_objects.ts";
import { optional, overlay, readTop, type Shaped, type ShapeReader } from "./orch_shape_reader.ts";

type Port = {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
  targetPort?: number | string;
};

/**
 * Ports with a valid number; a later port of a name already used is left out (the API server refuses both), so
 * each name means one port downstream.
 */
function ports(r: ShapeReader, value: unknown, path: string, withApp: boolean): Port[] | undefined {
  if (value === undefined || value === null) return undefined;
  const out: Port[] = [];
  const names = new Map<string, string>();
  for (const { item, at } of r.objects(value, path)) {
    const port = r.port(item.port, `${at}.port`);
    if (port === undefined) {
      if (item.port === undefined || item.port === null) r.wrong(`${at}.port`, "a port number", item.port);
      continue;
    }
    const name = r.string(item.name, `${at}.name`);
    const first = names.get(name ?? "");
    if (first !== undefined) {
      r.wrong(`${at}.name`, `a name no other port has (${first} has it)`, name ?? "");
      continue;
    }
    names.set(name ?? "", at);
    const target = item.targetPort;
    out.push({
      ...optional("name", name),
      port,
      ...optional("protocol", r.string(item.protocol, `${at}.protocol`)),
      ...(withApp && optional("appProtocol", r.string(item.appProtocol, `${at}.appProtocol`))),
      ...((typeof target === "number" || typeof target === "string") && { targetPort: target }),
    });
  }
  return out;
}

/** A Service as far as it is valid. */
export function shapeService(raw: unknown): Shaped<OrchService> {
  const { r, o, metadata } = readTop(raw);
  if (metadata === undefined) return r.refused();
  const spec = r.fields(o.spec, "spec");
  const status = r.fields(o.status, "status");
  const loadBalancer = r.fields(status?.loadBalancer, "status.loadBalancer");
  const ingress = loadBalancer?.ingress === undefined || loadBalancer.ingress === null
    ? undefined
    : r.objects(loadBalancer.ingress, "status.loadBalancer.ingress").map(({ item, at }) => ({
      ...optional("ip", r.string(item.ip, `${at}.ip`)),
      ...optional("hostname", r.string(item.hostname, `${at}.hostname`)),
    }));
  return r.done(overlay(o, {
    metadata,
    spec: spec && overlay(spec, {
      type: r.string(spec.type, "spec.type"),
      clusterIP: r.string(spec.clusterIP, "spec.clusterIP"),
      externalName: r.string(spec.externalName, "spec.externalName"),
      selector: r.stringMap(spec.selector, "spec.selector"),
      externalIPs: r.strings(spec.externalIPs, "spec.externalIPs"),
      ports: ports(r, spec.ports, "spec.ports", true),
    }),
    status: status && overlay(status, { loadBalancer: loadBalancer && overlay(loadBalancer, { ingress }) }),
  }) as unknown as OrchService);
}

/** A target reference's string fields. */
function targetRef(r: ShapeReader, value: unknown, path: string): OrchEndpointAddress["targetRef"] {
  const ref = r.fields(value, path);
  if (ref === undefined) return undefined;
  return overlay(ref, {
    kind: r.string(ref.kind, `${path}.kind`),
    name: r.string(ref.name, `${path}.name`),
    namespace: r.string(ref.namespace, `${path}.namespace`),
  });
}

/** The addresses with a string IP. */
function addresses(r: ShapeReader, value: unknown, path: string): OrchEndpointAddress[] {
  const out: OrchEndpointAddress[] = [];
  for (const { item, at } of r.objects(value, path)) {
    const ip = r.string(item.ip, `${at}.ip`);
    if (ip === undefined || ip === "") {
      if (ip === undefined && (item.ip === undefined || item.ip === null)) {
        r.wrong(`${at}.ip`, "an IP", item.ip);
      }
      if (ip === "") r.wrong(`${at}.ip`, "an IP", ip);
      continue;
    }
    out.push({
      ip,
      ...optional("nodeName", r.string(item.nodeName, `${at}.nodeName`)),
      ...optional("targetRef", targetRef(r, item.targetRef, `${at}.targetRef`)),
    });
  }
  return out;
}

/** An Endpoints object as far as it is valid. */
export function shapeEndpoints(raw: unknown): Shaped<OrchEndpoints> {
  const { r, o, metadata } = readTop(raw);
  if (metadata === undefined) return r.refused();
  const subsets = o.subsets === undefined || o.subsets === null
    ? undefined
    : r.objects(o.subsets, "subsets").map(({ item, at }) => ({
      addresses: addresses(r, item.addresses, `${at}.addresses`),
      notReadyAddresses: addresses(r, item.notReadyAddresses, `${at}.notReadyAddresses`),
      ports: ports(r, item.ports, `${at}.ports`, false) ?? [],
    }));
  return r.done(overlay(o, { metadata, subsets }) as unknown as OrchEndpoints);
}

/** An EndpointSlice as far as it is valid; an endpoint without addresses is left out. */
export function shapeEndpointSlice(raw: unknown): Shaped<OrchEndpointSlice> {
  const { r, o, metadata } = readTop(raw);
  if (metadata === undefined) return r.refused();
  const endpoints = o.endpoints === undefined || o.endpoints === null
    ? undefined
    : r.objects(o.endpoints, "endpoints").flatMap(({ item, at }) => {
      const ips = r.strings(item.addresses, `${at}.addresses`);
      if (ips === undefined) {
        if (item.addresses === undefined || item.addresses === null) {
          r.wrong(`${at}.addresses`, "a list of addresses", item.addresses);
        }
        return [];
      }
      const conditions = r.fields(item.conditions, `${at}.conditions`);
      const ready = r.boolean(conditions?.ready, `${at}.conditions.ready`);
      return [{
        addresses: ips.filter((ip) => ip !== ""),
        ...(conditions !== undefined && { conditions: optional("ready", ready) }),
        ...optional("targetRef", targetRef(r, item.targetRef, `${at}.targetRef`)),
        ...optional("nodeName", r.string(item.nodeName, `${at}.nodeName`)),
      }];
    });
  const slicePorts = o.ports === undefined || o.ports === null
    ? undefined
    : r.objects(o.ports, "ports").flatMap(({ item, at }) => {
      const port = r.port(item.port, `${at}.port`);
      if (port === undefined && item.port !== undefined && item.port !== null) return [];
      return [{
        ...optional("name", r.string(item.name, `${at}.name`)),
        ...optional("port", port),
        ...optional("protocol", r.string(item.protocol, `${at}.protocol`)),
      }];
    });
  return r.done(overlay(o, {
    metadata,
    addressType: r.string(o.addressType, "addressType"),
    endpoints,
    ports: slicePorts,
  }) as unknown as OrchEndpointSlice);
}

/** A Pod as far as it is valid: only its own endpoints and workload read it. */
export function shapePod(raw: unknown): Shaped<OrchPod> {
  const { r, o, metadata } = readTop(raw);
  if (metadata === undefined) return r.refused();
  const spec = r.fields(o.spec, "spec");
  const status = r.fields(o.status, "status");
  const conditions = status?.conditions === undefined || status.conditions === null
    ? undefined
    : r.objects(status.conditions, "status.conditions").flatMap(({ item, at }) => {
      const type = r.string(item.type, `${at}.type`);
      const state = r.string(item.status, `${at}.status`);
      return type === undefined || state === undefined ? [] : [{ ...item, type, status: state }];
    });
  return r.done(overlay(o, {
    metadata,
    spec: spec && overlay(spec, {
      serviceAccountName: r.string(spec.serviceAccountName, "spec.serviceAccountName"),
      nodeName: r.string(spec.nodeName, "spec.nodeName"),
    }),
    status: status && overlay(status, {
      podIP: r.string(status.podIP, "status.podIP"),
      phase: r.string(status.phase, "status.phase"),
      conditions,
    }),
  }) as unknown as OrchPod);
}

/** A Node or Namespace (only their metadata is read) as far as it is valid. */
export function shapeMetaOnly(raw: unknown): Shaped<OrchNode & OrchNamespace> {
  const { r, o, metadata } = readTop(raw);
  return r.done(metadata === undefined ? undefined : { ...o, metadata } as OrchNode & OrchNamespace);
}
