/**
 * Where the Envoy generators report EnvoyFilter patches they could not apply: a patch that would make a
 * generated resource invalid (by Envoy's schema and field validation) is skipped, counted in
 * `discovery_envoy_filter_rejected_patches` and logged once per patch, resource type and problem.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { excerpt } from "@mesh/shared/log/excerpt";

/** Counts and logs the EnvoyFilter patches the generators skip. */
export class EnvoyFilterReports {
  // Patches seen failing; starts over past 10,000 entries (docs/exposure.md), so an entry may log again.
  readonly #logged = new Set<string>();

  /** Reports through `metrics` and `logger`; either may be absent (tests, tools). */
  constructor(private readonly metrics?: Metrics, private readonly logger?: Logger) {}

  /** A patch (`index` of EnvoyFilter `filterKey`) made a resource of `type` invalid and was skipped. */
  rejected(filterKey: string, index: number, type: string, problem: string): void {
    this.metrics?.counter("discovery_envoy_filter_rejected_patches").inc({ envoy_filter: filterKey, type });
    // The problem is part of the identity: a patch edited into another mistake is logged again.
    const id = `${filterKey}#${index}|${type}|${excerpt(problem)}`;
    if (this.#logged.has(id)) return;
    if (this.#logged.size >= 10_000) this.#logged.clear();
    this.#logged.add(id);
    this.logger?.warn("EnvoyFilter patch skipped: it makes the generated resource invalid", {
      envoyFilter: filterKey,
      patch: index,
      type,
      problem: excerpt(problem),
    });
  }
}
