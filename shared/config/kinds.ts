import type { ValidationReport } from "./validation/report.ts";
import type { ValidationContext } from "./validation/context.ts";
import type { SpecPath } from "./validation/null_fields.ts";
import { type SecurityKind, securityKinds } from "./security/mod.ts";
import { validateDestinationRule } from "./networking/destination_rule.ts";
import { validateEnvoyFilter } from "./networking/envoy_filter.ts";
import { validateGateway } from "./networking/gateway.ts";
import { validateServiceEntry } from "./networking/service_entry.ts";
import { validateSidecar } from "./networking/sidecar.ts";
import { validateVirtualService } from "./networking/virtual_service.ts";
import { validateWorkloadEntry } from "./networking/workload_entry.ts";
import { validateWorkloadGroup } from "./networking/workload_group.ts";

/** Canonical API group of the traffic-management kinds. */
export const NETWORKING_GROUP = "networking.mesh.io";
/** Canonical API group of the security kinds. */
export const SECURITY_GROUP = "security.mesh.io";

/** Istio's API groups, accepted so that existing Istio YAML loads unchanged, mapped to ours. */
export const GROUP_ALIASES: Readonly<Record<string, string>> = {
  "networking.istio.io": NETWORKING_GROUP,
  "security.istio.io": SECURITY_GROUP,
};

/** Kinds of the networking group. */
export type NetworkingKind =
  | "VirtualService"
  | "DestinationRule"
  | "ServiceEntry"
  | "WorkloadEntry"
  | "WorkloadGroup"
  | "Gateway"
  | "Sidecar"
  | "EnvoyFilter";

/** Every mesh resource kind. */
export type MeshKind = NetworkingKind | SecurityKind;

/** Validates a resource's spec, recording issues under the path `spec` (and `metadata.name` where it matters). */
export type SpecValidator = (spec: unknown, report: ValidationReport, ctx: ValidationContext) => void;

/** What the registry knows about one kind. */
export interface KindInfo {
  readonly kind: MeshKind;
  /** Canonical group (never an alias). */
  readonly group: string;
  /** API versions the kind is served in, oldest first; the last one is the storage version. */
  readonly versions: readonly string[];
  /** Lower-case plural for URLs (`virtualservices`). */
  readonly plural: string;
  readonly validate: SpecValidator;
  /** Whether the spec field at `path` is a `google.protobuf.Struct`, where null is a value and not an unset field. */
  readonly holdsStruct?: (path: SpecPath) => boolean;
}

const NETWORKING_BOTH = ["v1alpha3", "v1beta1"] as const;

/** All kinds, with the versions Istio 1.9 serves them in. */
export const KINDS: readonly KindInfo[] = [
  {
    kind: "VirtualService",
    group: NETWORKING_GROUP,
    versions: NETWORKING_BOTH,
    plural: "virtualservices",
    validate: validateVirtualService,
  },
  {
    kind: "DestinationRule",
    group: NETWORKING_GROUP,
    versions: NETWORKING_BOTH,
    plural: "destinationrules",
    validate: validateDestinationRule,
  },
  {
    kind: "ServiceEntry",
    group: NETWORKING_GROUP,
    versions: NETWORKING_BOTH,
    plural: "serviceentries",
    validate: validateServiceEntry,
  },
  {
    kind: "WorkloadEntry",
    group: NETWORKING_GROUP,
    versions: NETWORKING_BOTH,
    plural: "workloadentries",
    validate: validateWorkloadEntry,
  },
  {
    kind: "WorkloadGroup",
    group: NETWORKING_GROUP,
    versions: ["v1alpha3"],
    plural: "workloadgroups",
    validate: validateWorkloadGroup,
  },
  {
    kind: "Gateway",
    group: NETWORKING_GROUP,
    versions: NETWORKING_BOTH,
    plural: "gateways",
    validate: validateGateway,
  },
  {
    kind: "Sidecar",
    group: NETWORKING_GROUP,
    versions: NETWORKING_BOTH,
    plural: "sidecars",
    validate: validateSidecar,
  },
  {
    kind: "EnvoyFilter",
    group: NETWORKING_GROUP,
    versions: ["v1alpha3"],
    plural: "envoyfilters",
    validate: validateEnvoyFilter,
    holdsStruct: (path) =>
      path.length === 4 && path[0] === "configPatches" && path[2] === "patch" && path[3] === "value",
  },
  {
    kind: "PeerAuthentication",
    group: SECURITY_GROUP,
    versions: ["v1beta1"],
    plural: "peerauthentications",
    validate: securityKinds.PeerAuthentication,
  },
  {
    kind: "RequestAuthentication",
    group: SECURITY_GROUP,
    versions: ["v1beta1"],
    plural: "requestauthentications",
    validate: securityKinds.RequestAuthentication,
  },
  {
    kind: "AuthorizationPolicy",
    group: SECURITY_GROUP,
    versions: ["v1beta1"],
    plural: "authorizationpolicies",
    validate: securityKinds.AuthorizationPolicy,
  },
];

/** Maps an API group to its canonical name (aliases resolved); undefined when it is not a mesh group. */
export function canonicalGroup(group: string): string | undefined {
  if (group === NETWORKING_GROUP || group === SECURITY_GROUP) return group;
  return GROUP_ALIASES[group];
}

/** The registry entry of `kind` in canonical `group`, if any. */
export function findKind(group: string, kind: string): KindInfo | undefined {
  return KINDS.find((k) => k.group === group && k.kind === kind);
}

/** The registry entry whose plural (URL name) is `plural` in canonical `group`, if any. */
export function findKindByPlural(group: string, plural: string): KindInfo | undefined {
  return KINDS.find((k) => k.group === group && k.plural === plural);
}
