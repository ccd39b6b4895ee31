/**
 * AuthorizationPolicies as Envoy RBAC filters on a sidecar's inbound chains, with the reference's meaning:
 * DENY policies are checked first and any match is refused; then, when any ALLOW policy selects the workload,
 * a request must match one of their rules; AUDIT policies only log. A rule matches when one `from` source, one
 * `to` operation and every `when` condition match (absent parts match anything); within a field, any value
 * matches, and `notX` refuses every one. An ALLOW policy without rules allows nothing; `rules: [{}]` allows
 * everything.
 *
 * On TCP chains the HTTP-only parts (hosts, methods, paths, request principals, request headers, JWT claims)
 * cannot be checked: an ALLOW rule that needs one matches nothing there, and a DENY rule is applied without
 * them, denying more rather than less. CUSTOM policies need an external authorizer this mesh does not run: they
 * deny what their rules select (fail closed) and are reported.
 *
 * @module
 */
import type { Resource } from "@mesh/shared/config/resource";
import type {
  AuthorizationPolicySpec,
  AuthorizationRule,
} from "@mesh/shared/config/security/authorization_policy";
import type { AuthorizationCondition } from "@mesh/shared/config/security/authorization_condition";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { selectorMatches } from "../../model/labels.ts";
import type { Proxy } from "../../model/proxy.ts";
import type { PushContext } from "../../push/push_context.ts";
import { configKey } from "../../push/push_request.ts";
import { compareByCreation } from "../../model/config_order.ts";
import type { EnvoyObject } from "../route_match.ts";
import { JWT_FILTER_NAME, JWT_PAYLOAD_METADATA } from "./jwt_authn.ts";

/** A policy that selects the proxy, with its name for Envoy's policy names and stats. */
export interface SelectedPolicy {
  readonly name: string;
  readonly spec: AuthorizationPolicySpec;
}

/** The policies that select `proxy`: its namespace's, and the root namespace's (mesh-wide), oldest first. */
export function authorizationPoliciesFor(
  proxy: Proxy,
  push: PushContext,
): { policies: SelectedPolicy[]; dependsOn: string[] } {
  const all = [...push.configs("AuthorizationPolicy")].sort(compareByCreation) as Resource<
    AuthorizationPolicySpec
  >[];
  const chosen = all.filter((r) =>
    (r.meta.namespace === proxy.namespace || r.meta.namespace === push.mesh.rootNamespace) &&
    selectorMatches(r.spec.selector?.matchLabels, proxy.metadata.labels)
  );
  return {
    policies: chosen.map((r) => ({ name: `ns[${r.meta.namespace}]-policy[${r.meta.name}]`, spec: r.spec })),
    dependsOn: chosen.map((r) => configKey("AuthorizationPolicy", r.meta.namespace, r.meta.name)),
  };
}

type Matcher = EnvoyObject;

/** Istio's string values: `*` any, `x*` prefix, `*x` suffix, else exact. */
function stringMatcher(value: string, ignoreCase = false): Matcher | "any" {
  const ic = ignoreCase ? { ignore_case: true } : {};
  if (value === "*") return "any";
  if (value.endsWith("*")) return { prefix: value.slice(0, -1), ...ic };
  if (value.startsWith("*")) return { suffix: value.slice(1), ...ic };
  return { exact: value, ...ic };
}

const or = (key: "or_rules" | "or_ids", items: Matcher[]): Matcher =>
  items.length === 1 ? items[0] : { [key]: { [key === "or_rules" ? "rules" : "ids"]: items } };
const and = (key: "and_rules" | "and_ids", items: Matcher[]): Matcher =>
  items.length === 0
    ? { any: true }
    : items.length === 1
    ? items[0]
    : { [key]: { [key === "and_rules" ? "rules" : "ids"]: items } };

function cidr(value: string): Matcher {
  const [address, length] = value.split("/");
  const prefixLen = length !== undefined ? Number(length) : address.includes(":") ? 128 : 32;
  return { address_prefix: address, prefix_len: { value: prefixLen } };
}

/** A principal matcher for one SPIFFE-style value (`td/ns/x/sa/y`, with Istio's wildcards). */
function principalName(value: string): Matcher {
  const m = stringMatcher(value);
  if (m === "any") return { authenticated: { principal_name: { safe_regex: { regex: ".+" } } } };
  if ("exact" in m) return { authenticated: { principal_name: { exact: `spiffe://${m.exact}` } } };
  if ("prefix" in m) return { authenticated: { principal_name: { prefix: `spiffe://${m.prefix}` } } };
  return { authenticated: { principal_name: m } };
}

function namespacePrincipal(value: string): Matcher {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\\*$/, ".*");
  return {
    authenticated: {
      principal_name: { safe_regex: { regex: `.*/ns/${value === "*" ? ".*" : escaped}/.*` } },
    },
  };
}

/** A claim of the verified token, as the JWT filter puts its payload in the request's metadata. */
function claim(name: string, matcher: Matcher): Matcher {
  return {
    metadata: {
      filter: JWT_FILTER_NAME,
      path: [{ key: JWT_PAYLOAD_METADATA }, { key: name }],
      value: { string_match: matcher },
    },
  };
}

/**
 * A request principal, `<iss>/<sub>` of the verified token: `*` any verified token, `<iss>/*` any subject of
 * that issuer, else both exactly (the issuer may contain `/`: the subject is what follows the last one).
 */
function requestPrincipal(value: string): Matcher {
  if (value === "*") return claim("iss", { safe_regex: { regex: ".+" } });
  const slash = value.lastIndexOf("/");
  if (slash < 0) return claim("iss", { exact: value });
  const [iss, sub] = [value.slice(0, slash), value.slice(slash + 1)];
  if (sub === "*") return claim("iss", { exact: iss });
  return { and_ids: { ids: [claim("iss", { exact: iss }), claim("sub", { exact: sub })] } };
}

function headerMatcher(name: string, value: string, ignoreCase = false): Matcher {
  const m = stringMatcher(value, ignoreCase);
  return { header: { name, ...(m === "any" ? { present_match: true } : { string_match: m }) } };
}

function pathMatcher(value: string): Matcher {
  const m = stringMatcher(value);
  return m === "any" ? { any: true } : { url_path: { path: m } };
}

/** Why a rule cannot be used where it is going: a part that only HTTP can check, on a TCP chain. */
class NeedsHttp extends Error {}

/** One field: the OR of its values, or NOT of that for `notX`. */
function field<T>(
  values: readonly T[] | undefined,
  notValues: readonly T[] | undefined,
  one: (v: T) => Matcher,
  orKey: "or_rules" | "or_ids",
  notKey: "not_rule" | "not_id",
): Matcher[] {
  const out: Matcher[] = [];
  if (values?.length) out.push(or(orKey, values.map(one)));
  if (notValues?.length) out.push({ [notKey]: or(orKey, notValues.map(one)) });
  return out;
}

interface Translation {
  /** True on TCP chains. */
  readonly tcp: boolean;
  /** On TCP, whether HTTP-only parts are dropped (DENY) or make the rule unusable (ALLOW). */
  readonly dropHttpOnly: boolean;
}

function httpOnly<T>(t: Translation, values: readonly T[] | undefined): readonly T[] | undefined {
  if (!t.tcp || !values?.length) return values;
  if (t.dropHttpOnly) return undefined;
  throw new NeedsHttp();
}

function conditionMatchers(
  c: AuthorizationCondition,
  t: Translation,
): { principal?: Matcher[]; permission?: Matcher[] } {
  const header = /^request\.headers\[(.+)\]$/.exec(c.key);
  if (header) {
    const values = httpOnly(t, c.values);
    const notValues = httpOnly(t, c.notValues);
    return { principal: field(values, notValues, (v) => headerMatcher(header[1], v), "or_ids", "not_id") };
  }
  switch (c.key) {
    case "source.ip":
      return {
        principal: field(c.values, c.notValues, (v) => ({ direct_remote_ip: cidr(v) }), "or_ids", "not_id"),
      };
    case "remote.ip":
      return { principal: field(c.values, c.notValues, (v) => ({ remote_ip: cidr(v) }), "or_ids", "not_id") };
    case "source.namespace":
      return { principal: field(c.values, c.notValues, namespacePrincipal, "or_ids", "not_id") };
    case "source.principal":
      return { principal: field(c.values, c.notValues, principalName, "or_ids", "not_id") };
    case "destination.port":
      return {
        permission: field(
          c.values,
          c.notValues,
          (v) => ({ destination_port: Number(v) }),
          "or_rules",
          "not_rule",
        ),
      };
    case "connection.sni":
      return {
        permission: field(
          c.values,
          c.notValues,
          (v) => {
            const m = stringMatcher(v);
            return m === "any" ? { any: true } : { requested_server_name: m };
          },
          "or_rules",
          "not_rule",
        ),
      };
    default:
      // request.auth.* and the other keys need the JWT filter or attributes this mesh does not produce.
      if (t.tcp && t.dropHttpOnly) return {};
      throw new NeedsHttp();
  }
}

/** The Envoy policy of one rule, or undefined when the rule cannot match on this kind of chain. */
function rulePolicy(rule: AuthorizationRule, t: Translation): EnvoyObject | undefined {
  try {
    const principals = (rule.from ?? []).map(({ source: s }) =>
      and("and_ids", [
        ...field(s.principals, s.notPrincipals, principalName, "or_ids", "not_id"),
        ...field(
          httpOnly(t, s.requestPrincipals),
          httpOnly(t, s.notRequestPrincipals),
          requestPrincipal,
          "or_ids",
          "not_id",
        ),
        ...field(s.namespaces, s.notNamespaces, namespacePrincipal, "or_ids", "not_id"),
        ...field(s.ipBlocks, s.notIpBlocks, (v) => ({ direct_remote_ip: cidr(v) }), "or_ids", "not_id"),
        ...field(s.remoteIpBlocks, s.notRemoteIpBlocks, (v) => ({ remote_ip: cidr(v) }), "or_ids", "not_id"),
      ])
    );
    const permissions = (rule.to ?? []).map(({ operation: o }) =>
      and("and_rules", [
        ...field(
          httpOnly(t, o.hosts),
          httpOnly(t, o.notHosts),
          (v) => headerMatcher(":authority", v, true),
          "or_rules",
          "not_rule",
        ),
        ...field(o.ports, o.notPorts, (v) => ({ destination_port: Number(v) }), "or_rules", "not_rule"),
        ...field(
          httpOnly(t, o.methods),
          httpOnly(t, o.notMethods),
          (v) => headerMatcher(":method", v),
          "or_rules",
          "not_rule",
        ),
        ...field(httpOnly(t, o.paths), httpOnly(t, o.notPaths), pathMatcher, "or_rules", "not_rule"),
      ])
    );
    const whenPrincipals: Matcher[] = [];
    const whenPermissions: Matcher[] = [];
    for (const condition of rule.when ?? []) {
      const m = conditionMatchers(condition, t);
      whenPrincipals.push(...(m.principal ?? []));
      whenPermissions.push(...(m.permission ?? []));
    }
    return {
      permissions: [
        and("and_rules", [
          permissions.length ? or("or_rules", permissions) : { any: true },
          ...whenPermissions,
        ]),
      ],
      principals: [
        and("and_ids", [principals.length ? or("or_ids", principals) : { any: true }, ...whenPrincipals]),
      ],
    };
  } catch (error) {
    if (error instanceof NeedsHttp) return undefined;
    throw error;
  }
}

/** The RBAC `rules` (action and named policies) of `policies` with one action, for one kind of chain. */
function rbacRules(
  policies: readonly SelectedPolicy[],
  action: "ALLOW" | "DENY" | "LOG",
  tcp: boolean,
): EnvoyObject {
  const named: Record<string, EnvoyObject> = {};
  for (const policy of policies) {
    for (const [i, rule] of (policy.spec.rules ?? []).entries()) {
      const built = rulePolicy(rule, { tcp, dropHttpOnly: action === "DENY" });
      if (built !== undefined) named[`${policy.name}-rule[${i}]`] = built;
    }
  }
  return { action, policies: named };
}

/** The RBAC filters of a sidecar's inbound chains: HTTP filters (before the router) and network filters. */
export interface AuthzFilters {
  readonly http: readonly EnvoyObject[];
  readonly tcp: readonly EnvoyObject[];
}

/** The RBAC filters for `policies`; none when no policy selects the workload. */
export function authzFilters(policies: readonly SelectedPolicy[]): AuthzFilters {
  const byAction = (action: string) => policies.filter((p) => (p.spec.action ?? "ALLOW") === action);
  // CUSTOM needs an external authorizer: what it selects is denied rather than let through unchecked.
  const deny = [...byAction("DENY"), ...byAction("CUSTOM")];
  const allow = byAction("ALLOW");
  const audit = byAction("AUDIT");
  const build = (tcp: boolean) => {
    const filter = (rules: EnvoyObject, prefix: string) =>
      tcp
        ? {
          name: "envoy.filters.network.rbac",
          typed_config: { "@type": TYPE_URL.rbacNetwork, stat_prefix: prefix, rules },
        }
        : { name: "envoy.filters.http.rbac", typed_config: { "@type": TYPE_URL.rbacHttp, rules } };
    return [
      ...(audit.length ? [filter(rbacRules(audit, "LOG", tcp), "tcp.audit.")] : []),
      ...(deny.length ? [filter(rbacRules(deny, "DENY", tcp), "tcp.deny.")] : []),
      ...(allow.length ? [filter(rbacRules(allow, "ALLOW", tcp), "tcp.allow.")] : []),
    ];
  };
  return { http: build(false), tcp: build(true) };
}
