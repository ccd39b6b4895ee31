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

/** The Envoy generators. */
export function envoyGenerators(): XdsGenerator<PushContext>[] {
  return [envoyCdsGenerator, envoyEdsGenerator, envoyLdsGenerator, envoyRdsGenerator, envoySdsGenerator];
}

/** Registers the Envoy generators under the default flavour; returns the registry. */
export function registerEnvoyGenerators(
  registry: GeneratorRegistry<PushContext>,
): GeneratorRegistry<PushContext> {
  for (const generator of envoyGenerators()) registry.register(generator, DEFAULT_GENERATOR);
  return registry;
}
