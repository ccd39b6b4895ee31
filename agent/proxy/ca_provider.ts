/**
 * `CA_PROVIDER`: which certificate service the agent's CSR goes to. The reference picks its own CA's protocol
 * for any name but its cloud CA's; here each accepted name maps to the gRPC service that speaks it, and a
 * name that maps to none stops startup instead of silently asking the wrong service.
 *
 * @module
 */
import { ISTIO_CA_SERVICE, MESH_CA_SERVICE } from "@mesh/proto/ca_service";

/** Accepted `CA_PROVIDER` values and the gRPC service each calls. */
export const CA_PROVIDERS: Readonly<Record<string, string>> = Object.freeze({
  // The mesh's own CA (the discovery server's, or one at CA_ADDR), under our service name.
  Builtin: MESH_CA_SERVICE,
  // The reference's name for its built-in CA: the same contract under Istio's service name, for a CA that
  // serves only that one.
  Citadel: ISTIO_CA_SERVICE,
});

/**
 * The gRPC service of `provider`.
 *
 * @throws {RangeError} naming the value and the accepted ones, for a provider this agent cannot reach
 */
export function caServiceFor(provider: string): string {
  const service = CA_PROVIDERS[provider];
  if (service === undefined) {
    throw new RangeError(
      `CA_PROVIDER="${provider}" is not a CA this agent can ask: expected one of ` +
        `${Object.keys(CA_PROVIDERS).map((p) => `"${p}"`).join(", ")} (a cloud CA such as the reference's ` +
        '"GoogleCA" is not built)',
    );
  }
  return service;
}
