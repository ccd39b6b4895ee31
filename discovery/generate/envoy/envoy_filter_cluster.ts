/**
 * EnvoyFilter CLUSTER patches: which generated clusters a patch matches (by name, or by the service host,
 * port and subset an `outbound|<port>|<subset>|<host>` name carries) and what MERGE and REMOVE do to one.
 * ADD makes a new cluster from the patch value (see the generator wrapper).
 *
 * @module
 */
import type protobuf from "protobufjs";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { messageTypeForUrl } from "@mesh/proto/any_codec";
import type { EnvoyConfigObjectPatch } from "@mesh/shared/config/networking/envoy_filter";
import { mergeInto, patchObject } from "./proto_merge.ts";
import type { PatchContext } from "./envoy_filter_select.ts";

type Obj = Record<string, unknown>;

/** The context of a cluster of a proxy: inbound clusters are the sidecar's inbound side. */
export function clusterContext(proxyType: string, name: string): PatchContext {
  if (proxyType === "router") return "GATEWAY";
  return name.startsWith("inbound|") ? "SIDECAR_INBOUND" : "SIDECAR_OUTBOUND";
}

/** True when `patch`'s cluster match selects the cluster called `name`. */
export function clusterMatches(patch: EnvoyConfigObjectPatch, name: string): boolean {
  const match = patch.match?.cluster;
  if (match === undefined) return true;
  if (match.name) return match.name === name;
  const [direction, port, subset, host] = name.split("|");
  const keyed = direction === "outbound" || direction === "inbound";
  if (match.service && (!keyed || host !== match.service)) return false;
  if (match.subset && (!keyed || subset !== match.subset)) return false;
  if (match.portNumber && (!keyed || Number(port) !== match.portNumber)) return false;
  return true;
}

/** The patch value as a Cluster object. */
export function clusterValue(patch: EnvoyConfigObjectPatch, root: protobuf.Root): Obj {
  return patchObject(messageTypeForUrl(TYPE_URL.cluster, root), patch.patch.value ?? {}, root);
}

/** `cluster` after a matching MERGE or REMOVE patch (undefined: removed); other operations leave it. */
export function patchCluster(
  cluster: Obj,
  patch: EnvoyConfigObjectPatch,
  root: protobuf.Root,
): Obj | undefined {
  if (patch.applyTo !== "CLUSTER" || !clusterMatches(patch, String(cluster.name))) return cluster;
  if (patch.patch.operation === "REMOVE") return undefined;
  if (patch.patch.operation !== "MERGE") return cluster;
  return mergeInto(messageTypeForUrl(TYPE_URL.cluster, root), cluster, clusterValue(patch, root), root);
}
