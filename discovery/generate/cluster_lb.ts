/**
 * A DestinationRule's load balancer as Envoy Cluster fields that gRPC's xDS clients understand.
 *
 * gRPC implements ROUND_ROBIN and RING_HASH from `lb_policy` everywhere; LEAST_REQUEST only in some languages
 * (gRFC A48: Go, Java, C++), and RANDOM nowhere. For those two the cluster also carries a
 * `load_balancing_policy` (gRFC A52) listing the wanted policy then round robin, inside `wrr_locality` so
 * locality weights still apply: a client that knows the policy uses it, any other falls back to round robin
 * instead of rejecting the cluster (grpc-js 1.14 has no least-request policy and falls back).
 *
 * @module
 */
import type { LoadBalancerSettings } from "@mesh/shared/config/networking/traffic_policy";
import { typeUrlOf } from "@mesh/proto/type_urls";
import type { EnvoyObject } from "./route_match.ts";

const POLICY = "envoy.extensions.load_balancing_policies";

/** Type URLs of the load-balancing policy extensions. */
export const LB_POLICY_TYPE_URL = {
  leastRequest: typeUrlOf(`${POLICY}.least_request.v3.LeastRequest`),
  random: typeUrlOf(`${POLICY}.random.v3.Random`),
  roundRobin: typeUrlOf(`${POLICY}.round_robin.v3.RoundRobin`),
  wrrLocality: typeUrlOf(`${POLICY}.wrr_locality.v3.WrrLocality`),
} as const;

/** Istio's default ring size when a consistent hash sets none. */
export const DEFAULT_MINIMUM_RING_SIZE = 1024;

function extension(name: string, typeUrl: string): EnvoyObject {
  return { typed_extension_config: { name, typed_config: { "@type": typeUrl } } };
}

/** `load_balancing_policy`: wrr_locality over [preferred policy, round robin]. */
function policyWithFallback(name: string, typeUrl: string): EnvoyObject {
  return {
    policies: [{
      typed_extension_config: {
        name: "envoy.load_balancing_policies.wrr_locality",
        typed_config: {
          "@type": LB_POLICY_TYPE_URL.wrrLocality,
          endpoint_picking_policy: {
            policies: [
              extension(name, typeUrl),
              extension("envoy.load_balancing_policies.round_robin", LB_POLICY_TYPE_URL.roundRobin),
            ],
          },
        },
      },
    }],
  };
}

/**
 * The Cluster fields for a load balancer setting: nothing for round robin (the default; also used for
 * PASSTHROUGH, which has no meaning without a sidecar), `RING_HASH` with its ring size and xxHash (the only
 * hash gRPC accepts) for a consistent hash, `LEAST_REQUEST` or `RANDOM` with a fallback policy list.
 */
export function clusterLbFields(lb: LoadBalancerSettings | undefined): EnvoyObject {
  if (lb?.consistentHash !== undefined) {
    return {
      lb_policy: "RING_HASH",
      ring_hash_lb_config: {
        minimum_ring_size: { value: String(lb.consistentHash.minimumRingSize || DEFAULT_MINIMUM_RING_SIZE) },
        hash_function: "XX_HASH",
      },
    };
  }
  switch (lb?.simple) {
    case "LEAST_CONN":
      return {
        lb_policy: "LEAST_REQUEST",
        load_balancing_policy: policyWithFallback(
          "envoy.load_balancing_policies.least_request",
          LB_POLICY_TYPE_URL.leastRequest,
        ),
      };
    case "RANDOM":
      return {
        lb_policy: "RANDOM",
        load_balancing_policy: policyWithFallback(
          "envoy.load_balancing_policies.random",
          LB_POLICY_TYPE_URL.random,
        ),
      };
    default:
      return {};
  }
}
