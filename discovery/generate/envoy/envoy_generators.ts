/**
 * The Envoy generator family (`default`): what every proxy gets unless its `GENERATOR` metadata names another
 * registered family.
 *
 * @module
 */
import type { PushContext } from "../../push/push_context.ts";
import { DEFAULT_GENERATOR, type GeneratorRegistry, type XdsGenerator } from "../generator.ts";
import { envoyCdsGenerator } from "./envoy_cds.ts";
import { envoyEdsGenerator } from "./envoy_eds.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import { envoyRdsGenerator } from "./envoy_rds.ts";
import { envoySdsGenerator } from "./envoy_sds.ts";
import { withEnvoyFilters } from "./envoy_filter_generator.ts";
import { EnvoyFilterReports } from "./envoy_filter_reports.ts";

/** The Envoy generators, CDS, LDS and RDS with EnvoyFilter patches applied (skipped ones told to `reports`). */
export function envoyGenerators(
  reports: EnvoyFilterReports = new EnvoyFilterReports(),
): XdsGenerator<PushContext>[] {
  return [
    withEnvoyFilters(envoyCdsGenerator, reports),
    envoyEdsGenerator,
    withEnvoyFilters(envoyLdsGenerator, reports),
    withEnvoyFilters(envoyRdsGenerator, reports),
    envoySdsGenerator,
  ];
}

/** Registers the Envoy generators under the default flavour; returns the registry. */
export function registerEnvoyGenerators(
  registry: GeneratorRegistry<PushContext>,
  reports?: EnvoyFilterReports,
): GeneratorRegistry<PushContext> {
  for (const generator of envoyGenerators(reports)) registry.register(generator, DEFAULT_GENERATOR);
  return registry;
}
