/**
 * Ingresses and IngressClasses checked against the fields the translation reads (`ingress_convert.ts`) before
 * the Ingress source stores them. Anyone who may create an Ingress in some namespace writes these objects, and
 * the list may come from a broken API server: a field or entry of the wrong shape is left out and reported by
 * path (a path whose backend has no usable service or port stays, for the translation to skip with its reason),
 * and an object that cannot be keyed is refused whole.
 *
 * @module
 */
import type { IngressObject, IngressPath } from "./ingress_convert.ts";
import {
  type Fields,
  optional,
  overlay,
  readTop,
  type Shaped,
  type ShapeReader,
} from "./orch_shape_reader.ts";

/** An IngressClass as the source reads it: its name and controller. */
export interface IngressClassObject {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec?: { readonly controller?: string };
}

/** v1's `backend.service`: a name and a port by number (1 to 65535) or by name. */
function serviceBackend(r: ShapeReader, value: unknown, at: string) {
  const service = r.fields(value, at);
  if (service === undefined) return undefined;
  const port = r.fields(service.port, `${at}.port`);
  return overlay(service, {
    name: r.string(service.name, `${at}.name`),
    port: port && overlay(port, {
      number: r.port(port.number, `${at}.port.number`),
      name: r.string(port.name, `${at}.port.name`),
    }),
  });
}

/** v1beta1's `servicePort`: an int or a string, as the API's IntOrString. */
function servicePort(r: ShapeReader, value: unknown, at: string): number | string | undefined {
  if (typeof value === "string") return value;
  return r.port(value, at);
}

/** The paths of a rule that are objects, their fields checked. */
function paths(r: ShapeReader, value: unknown, at: string): IngressPath[] | undefined {
  if (value === undefined || value === null) return undefined;
  return r.objects(value, at).map(({ item, at }) => {
    const backend = r.fields(item.backend, `${at}.backend`);
    return overlay(item, {
      path: r.string(item.path, `${at}.path`),
      pathType: r.string(item.pathType, `${at}.pathType`),
      backend: backend && overlay(backend, {
        service: serviceBackend(r, backend.service, `${at}.backend.service`),
        serviceName: r.string(backend.serviceName, `${at}.backend.serviceName`),
        servicePort: servicePort(r, backend.servicePort, `${at}.backend.servicePort`),
      }),
    }) as IngressPath;
  });
}

/** The rules that are objects; a rule's `http` that is not an object counts as absent (no paths). */
function rules(r: ShapeReader, value: unknown): NonNullable<IngressObject["spec"]>["rules"] {
  if (value === undefined || value === null) return undefined;
  return r.objects(value, "spec.rules").map(({ item, at }) => {
    const http = r.fields(item.http, `${at}.http`);
    return overlay(item, {
      host: r.string(item.host, `${at}.host`),
      http: http && overlay(http, { paths: paths(r, http.paths, `${at}.http.paths`) }),
    });
  });
}

/** The TLS entries that are objects, with string hosts and secret name. */
function tls(r: ShapeReader, value: unknown): NonNullable<IngressObject["spec"]>["tls"] {
  if (value === undefined || value === null) return undefined;
  return r.objects(value, "spec.tls").map(({ item, at }: { item: Fields; at: string }) =>
    overlay(item, {
      hosts: r.strings(item.hosts, `${at}.hosts`),
      secretName: r.string(item.secretName, `${at}.secretName`),
    })
  );
}

/** An Ingress (networking.k8s.io v1 or v1beta1) as far as it is valid. */
export function shapeIngress(raw: unknown): Shaped<IngressObject & { metadata: { name: string } }> {
  const { r, o, metadata } = readTop(raw);
  if (metadata === undefined) return r.refused();
  const spec = r.fields(o.spec, "spec");
  return r.done(
    overlay(o, {
      metadata,
      spec: spec && overlay(spec, {
        ingressClassName: r.string(spec.ingressClassName, "spec.ingressClassName"),
        tls: tls(r, spec.tls),
        rules: rules(r, spec.rules),
        // Only their presence is read: the default backend is reported as not translated.
        defaultBackend: spec.defaultBackend ?? undefined,
        backend: spec.backend ?? undefined,
      }),
    }) as unknown as IngressObject & { metadata: { name: string } },
  );
}

/** An IngressClass as far as it is valid: a controller that is not a string is left out. */
export function shapeIngressClass(raw: unknown): Shaped<IngressClassObject> {
  const { r, o, metadata } = readTop(raw);
  if (metadata === undefined) return r.refused();
  const spec = r.fields(o.spec, "spec");
  return r.done({
    metadata,
    ...optional("spec", spec && optional("controller", r.string(spec.controller, "spec.controller"))),
  });
}
