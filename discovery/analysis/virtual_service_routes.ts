/**
 * The parts of a VirtualService's spec the analyzers read, and its route and mirror destinations in the
 * reference's order (tcp, tls, http routes, then http mirrors).
 * @module
 */

/** A route destination. */
export interface Destination {
  readonly host?: string;
  readonly subset?: string;
  readonly port?: { readonly number?: number };
}

/** A string match of an HTTP request field. */
export interface StringMatch {
  readonly exact?: string;
  readonly prefix?: string;
  readonly regex?: string;
}

/** An HTTP match condition. */
export interface HttpMatch {
  readonly name?: string;
  readonly uri?: StringMatch;
  readonly scheme?: StringMatch;
  readonly method?: StringMatch;
  readonly authority?: StringMatch;
  readonly headers?: Readonly<Record<string, StringMatch>>;
  readonly queryParams?: Readonly<Record<string, StringMatch>>;
}

/** An HTTP, TCP or TLS route. */
export interface Route {
  readonly name?: string;
  readonly match?: readonly unknown[];
  readonly route?: readonly { readonly destination?: Destination }[];
  readonly mirror?: Destination;
  readonly fault?: { readonly delay?: { readonly percent?: number } };
  readonly corsPolicy?: { readonly allowOrigins?: readonly StringMatch[] };
}

/** The VirtualService fields the analyzers read. */
export interface VirtualServiceSpec {
  readonly hosts?: readonly string[];
  readonly gateways?: readonly string[];
  readonly exportTo?: readonly string[];
  readonly http?: readonly Route[];
  readonly tcp?: readonly Route[];
  readonly tls?: readonly Route[];
}

/** A destination with the rule it is in: `tcp`, `tls`, `http` or `http.mirror`. */
export interface RuleDestination {
  readonly rule: "tcp" | "tls" | "http" | "http.mirror";
  readonly destination: Destination;
}

/** Route destinations: every `route[].destination` of the tcp, tls and http rules, in that order. */
export function routeDestinations(vs: VirtualServiceSpec): RuleDestination[] {
  const out: RuleDestination[] = [];
  for (const rule of ["tcp", "tls", "http"] as const) {
    for (const route of vs[rule] ?? []) {
      for (const rd of route.route ?? []) out.push({ rule, destination: rd.destination ?? {} });
    }
  }
  return out;
}

/** The `mirror` destinations of the http rules. */
export function mirrorDestinations(vs: VirtualServiceSpec): RuleDestination[] {
  return (vs.http ?? []).filter((r) => r.mirror).map((r) => ({
    rule: "http.mirror",
    destination: r.mirror!,
  }));
}
