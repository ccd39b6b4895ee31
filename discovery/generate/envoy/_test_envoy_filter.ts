/**
 * Test support: EnvoyFilter resources and runs of the Envoy generators with them applied.
 *
 * @module
 */
import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { NETWORKING_GROUP } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import type { EnvoyFilterSpec } from "@mesh/shared/config/networking/envoy_filter";
import type { Proxy } from "../../model/proxy.ts";
import { type Generated, run, World } from "../_test_world.ts";
import type { XdsGenerator } from "../generator.ts";
import type { PushContext } from "../../push/push_context.ts";
import { envoyResources, envoySidecar } from "./_test_envoy.ts";
import { withEnvoyFilters } from "./envoy_filter_generator.ts";
import { EnvoyFilterReports } from "./envoy_filter_reports.ts";

/** A decoded resource. */
export type Obj = Record<string, unknown>;

/** An EnvoyFilter resource. */
export function envoyFilter(
  namespace: string,
  name: string,
  spec: EnvoyFilterSpec,
): Resource<EnvoyFilterSpec> {
  return {
    gvk: { group: NETWORKING_GROUP, version: "v1alpha3", kind: "EnvoyFilter" },
    meta: { name, namespace },
    spec,
  };
}

/** The CORS HTTP filter, a patch value. */
export const CORS = { name: "envoy.filters.http.cors", typed_config: { "@type": TYPE_URL.cors } };

/** Runs `generator` with EnvoyFilters; every output must pass Envoy's schema and field validation. */
export function generate(
  generator: XdsGenerator<PushContext>,
  filters: readonly Resource[],
  proxy: Proxy = envoySidecar("example", "10.0.2.1"),
  reports = new EnvoyFilterReports(),
  names: string[] = [],
): Generated {
  const push = new World().apply(...envoyResources(), ...filters).push();
  const out = run(withEnvoyFilters(generator, reports), proxy, push, { names });
  for (const [name, bytes] of out.bytes) {
    const violations = validatePgvAny(bytes);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  return out;
}

/** A repeated field of a decoded resource. */
export const asList = (v: unknown) => (v ?? []) as Obj[];

/** The HTTP connection manager of a listener's first HTTP chain. */
export function hcm(listener: Obj): Obj {
  for (const chain of asList(listener.filter_chains)) {
    for (const filter of asList(chain.filters)) {
      if (filter.name === "envoy.filters.network.http_connection_manager") return filter.typed_config as Obj;
    }
  }
  throw new Error(`Listener "${listener.name}" has no HTTP connection manager`);
}

/** The HTTP filter names of a listener's first HTTP chain, in order. */
export const httpFilterNames = (listener: Obj) => asList(hcm(listener).http_filters).map((f) => f.name);

/** An EnvoyFilter inserting CORS before the router of every HTTP chain (of `context`, if given). */
export const corsEverywhere = (
  namespace: string,
  name: string,
  extra: Partial<EnvoyFilterSpec> = {},
  context?: "SIDECAR_INBOUND" | "GATEWAY",
) =>
  envoyFilter(namespace, name, {
    ...extra,
    configPatches: [{
      applyTo: "HTTP_FILTER",
      match: {
        ...(context ? { context } : {}),
        listener: { filterChain: { filter: { subFilter: { name: "envoy.filters.http.router" } } } },
      },
      patch: { operation: "INSERT_BEFORE", value: CORS },
    }],
  });

/** True when the listener `name` has the CORS filter. */
export const hasCors = (lds: Generated, name = "0.0.0.0_8080") =>
  httpFilterNames(lds.byName.get(name)!).includes("envoy.filters.http.cors");
