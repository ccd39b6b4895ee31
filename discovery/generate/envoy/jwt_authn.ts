/**
 * RequestAuthentication as Envoy's `jwt_authn` HTTP filter on a sidecar's inbound HTTP chains, with the
 * reference's meaning: a request that carries a token must carry a valid one from a configured issuer (else
 * 401); a request without a token passes, and AuthorizationPolicies decide what it may do (`requestPrincipals`
 * read the verified token's `iss` and `sub` from the filter's metadata). Keys come inline (`jwks`) or from
 * `jwksUri`, fetched by the proxy through a `jwks|<host>|<port>` cluster that CDS adds.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import type { JwtRule, RequestAuthenticationSpec } from "@mesh/shared/config/security/request_authentication";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { compareByCreation } from "../../model/config_order.ts";
import { selectorMatches } from "../../model/labels.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { derivedTable } from "../../push/derived_memo.ts";
import { configKey } from "../../push/push_request.ts";
import type { EnvoyObject } from "../route_match.ts";

/** Where the verified token's payload is put in the request's metadata, under the filter's name. */
export const JWT_PAYLOAD_METADATA = "payload";
/** The name of the filter, which is also the metadata namespace RBAC reads. */
export const JWT_FILTER_NAME = "envoy.filters.http.jwt_authn";

/** The JWT rules that select a proxy, per snapshot and proxy object; read-only to every caller. */
const JWT_RULES = derivedTable<Proxy, undefined, { rules: JwtRule[]; dependsOn: string[] }>("jwtRules");

/**
 * The JWT rules of the RequestAuthentications selecting `proxy` (its namespace's and the root's), oldest first.
 * Remembered per snapshot and proxy: CDS and LDS, shapes and generators, each ask for them.
 */
export function jwtRulesFor(proxy: Proxy, push: PushContext): { rules: JwtRule[]; dependsOn: string[] } {
  return push.derived.get(JWT_RULES, proxy, undefined, () => computeJwtRules(proxy, push));
}

function computeJwtRules(proxy: Proxy, push: PushContext): { rules: JwtRule[]; dependsOn: string[] } {
  const all = [...push.configs("RequestAuthentication")].sort(compareByCreation) as Resource<
    RequestAuthenticationSpec
  >[];
  const chosen = all.filter((r) =>
    (r.meta.namespace === proxy.namespace || r.meta.namespace === push.mesh.rootNamespace) &&
    selectorMatches(r.spec.selector?.matchLabels, proxy.metadata.labels)
  );
  return {
    rules: chosen.flatMap((r) => r.spec.jwtRules ?? []),
    dependsOn: chosen.map((r) => configKey("RequestAuthentication", r.meta.namespace, r.meta.name)),
  };
}

/** The cluster through which the proxy fetches a `jwksUri`, and the URI's parts; undefined for a bad URI. */
export function jwksTarget(
  uri: string,
): { cluster: string; host: string; port: number; tls: boolean } | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  const tls = url.protocol === "https:";
  const port = url.port !== "" ? Number(url.port) : tls ? 443 : 80;
  return { cluster: `jwks|${url.hostname}|${port}`, host: url.hostname, port, tls };
}

function provider(rule: JwtRule): EnvoyObject | undefined {
  const jwks = rule.jwks
    ? { local_jwks: { inline_string: rule.jwks } }
    : rule.jwksUri && jwksTarget(rule.jwksUri)
    ? {
      remote_jwks: {
        http_uri: {
          uri: rule.jwksUri,
          cluster: jwksTarget(rule.jwksUri)!.cluster,
          timeout: { seconds: "5" },
        },
        cache_duration: { seconds: "300" },
      },
    }
    : undefined;
  if (jwks === undefined) return undefined;
  return {
    issuer: rule.issuer,
    ...(rule.audiences?.length ? { audiences: [...rule.audiences] } : {}),
    ...jwks,
    ...(rule.forwardOriginalToken ? { forward: true } : {}),
    ...(rule.fromHeaders?.length
      ? {
        from_headers: rule.fromHeaders.map((h) => ({
          name: h.name,
          ...(h.prefix ? { value_prefix: h.prefix } : {}),
        })),
      }
      : {}),
    ...(rule.fromParams?.length ? { from_params: [...rule.fromParams] } : {}),
    ...(rule.outputPayloadToHeader ? { forward_payload_header: rule.outputPayloadToHeader } : {}),
    payload_in_metadata: JWT_PAYLOAD_METADATA,
  };
}

/** The `jwt_authn` filter for `rules`; undefined when there are none (or none has keys to verify with). */
export function jwtAuthnFilter(rules: readonly JwtRule[]): EnvoyObject | undefined {
  const providers: Record<string, EnvoyObject> = {};
  rules.forEach((rule, i) => {
    const built = provider(rule);
    if (built !== undefined) providers[`origins-${i}`] = built;
  });
  const names = Object.keys(providers);
  if (names.length === 0) return undefined;
  return {
    name: JWT_FILTER_NAME,
    typed_config: {
      "@type": TYPE_URL.jwtAuthn,
      providers,
      rules: [{
        match: { prefix: "/" },
        // Any valid token from a configured issuer, or none at all: a present but invalid token is refused.
        requires: {
          requires_any: {
            requirements: [...names.map((n) => ({ provider_name: n })), { allow_missing: {} }],
          },
        },
      }],
    },
  };
}
