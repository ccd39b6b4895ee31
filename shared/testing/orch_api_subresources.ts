/**
 * Test support for the test API server (`orch_api_server.ts`): the kinds and subresources status writing and
 * the orchestrator signer use. ConfigMaps and `certificates.k8s.io/v1` CertificateSigningRequests are served;
 * the mesh kinds and CSRs have a `status` subresource (a PUT or PATCH of `…/status` changes only `status`, an
 * update of the object keeps its `status`, and `metadata.generation` counts spec changes), CSRs an `approval`
 * subresource (only `status.conditions` changes); an update naming a `resourceVersion` other than the stored
 * one is 409 Conflict, as a real server answers it. Only tests import this file.
 *
 * @module
 */

/** One resource type of the test API server, as it declares them. */
export interface SubresourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

type Stored = Record<string, unknown> & { metadata: Record<string, unknown> };

/** The kinds served beside the core ones and the mesh's: ConfigMaps and CertificateSigningRequests. */
export const SUBRESOURCE_KINDS: readonly SubresourceType[] = [
  { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  {
    group: "certificates.k8s.io",
    version: "v1",
    kind: "CertificateSigningRequest",
    plural: "certificatesigningrequests",
    namespaced: false,
  },
];

/** The subresources a type serves, by name. */
export function subresourcesOf(type: SubresourceType): readonly string[] {
  if (type.kind === "CertificateSigningRequest") return ["status", "approval"];
  const withStatus = type.group.endsWith(".mesh.io") || type.group.endsWith(".istio.io") ||
    type.kind === "Ingress";
  return withStatus ? ["status"] : [];
}

/** Why a write is refused: the HTTP code and reason the server answers with. */
export class WriteRefused extends Error {
  /** `code` and `reason` go to the Status answer. */
  constructor(readonly code: number, readonly reason: string, message: string) {
    super(message);
    this.name = "WriteRefused";
  }
}

function withoutMetaAndStatus(object: Stored): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...spec } = object;
  return JSON.stringify(spec);
}

/**
 * What an update stores, from the stored object (`previous`) and what the client sent (`input`): a write of
 * subresource `subresource` keeps everything but its part, a write of the object keeps the stored `status` of
 * a type with a status subresource; `generation` starts at 1 and grows when anything but metadata and status
 * changes. Throws {@link WriteRefused} for a stale `resourceVersion`, an unknown subresource or a missing object.
 */
export function subresourceWrite(
  type: SubresourceType,
  previous: Stored | undefined,
  input: Stored,
  subresource: string | undefined,
): Stored {
  const sent = input.metadata.resourceVersion;
  if (
    previous !== undefined && sent !== undefined && sent !== "" && sent !== previous.metadata.resourceVersion
  ) {
    throw new WriteRefused(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${type.plural} "${input.metadata.name}": the object has been modified; ` +
        "please apply your changes to the latest version and try again",
    );
  }
  const subs = subresourcesOf(type);
  if (subresource !== undefined) {
    if (!subs.includes(subresource)) {
      throw new WriteRefused(404, "NotFound", `${type.plural} have no subresource "${subresource}"`);
    }
    if (previous === undefined) {
      throw new WriteRefused(404, "NotFound", `${type.plural} "${input.metadata.name}" not found`);
    }
    const status = (input.status ?? {}) as Record<string, unknown>;
    return subresource === "approval"
      ? { ...previous, status: { ...(previous.status as object ?? {}), conditions: status.conditions ?? [] } }
      : { ...previous, status };
  }
  if (!subs.includes("status")) return input;
  const generation = previous === undefined ? 1 : Number(previous.metadata.generation ?? 1) +
    (withoutMetaAndStatus(previous) === withoutMetaAndStatus(input) ? 0 : 1);
  const { status: _ignored, ...rest } = input;
  return {
    ...rest,
    ...(previous?.status !== undefined ? { status: previous.status } : {}),
    metadata: { ...input.metadata, generation },
  };
}
