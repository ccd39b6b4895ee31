/**
 * The proxyless gRPC generator family (node metadata `GENERATOR=grpc`): LDS, RDS, CDS and EDS built for
 * gRPC's own xDS client.
 *
 * @module
 */
import type { PushContext } from "../push/push_context.ts";
import { type GeneratorRegistry, GRPC_GENERATOR, type XdsGenerator } from "./generator.ts";
import { grpcCdsGenerator } from "./grpc_cds.ts";
import { grpcEdsGenerator } from "./grpc_eds.ts";
import { grpcLdsGenerator } from "./grpc_lds.ts";
import { grpcRdsGenerator } from "./grpc_rds.ts";

/** The four gRPC generators. */
export function grpcGenerators(): XdsGenerator<PushContext>[] {
  return [grpcCdsGenerator, grpcEdsGenerator, grpcLdsGenerator, grpcRdsGenerator];
}

/** Registers the gRPC generators under the `grpc` flavour; returns the registry. */
export function registerGrpcGenerators(
  registry: GeneratorRegistry<PushContext>,
): GeneratorRegistry<PushContext> {
  for (const generator of grpcGenerators()) registry.register(generator, GRPC_GENERATOR);
  return registry;
}
