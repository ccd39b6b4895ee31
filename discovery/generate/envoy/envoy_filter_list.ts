/**
 * An EnvoyFilter operation on an ordered list of generated objects (filter chains, network and HTTP filters,
 * virtual hosts, routes): which items it merges, removes or replaces, and where it inserts its value.
 *
 * @module
 */
import type protobuf from "protobufjs";
import type { EnvoyConfigObjectPatch, PatchOperation } from "@mesh/shared/config/networking/envoy_filter";
import { mergeInto, patchObject } from "./proto_merge.ts";

type Obj = Record<string, unknown>;

/**
 * `list` after `operation`: MERGE merges every matching item, REMOVE drops them, REPLACE swaps the first for
 * the value; ADD appends the value; INSERT_BEFORE/AFTER put it beside the first matching item and INSERT_FIRST
 * at the start when one matches (nowhere when none does, as the reference). Without a match (`hasMatch`
 * false) INSERT_BEFORE and INSERT_FIRST prepend, INSERT_AFTER appends and REPLACE does nothing.
 */
export function patchList(
  list: readonly Obj[],
  operation: PatchOperation,
  hasMatch: boolean,
  matches: (item: Obj) => boolean,
  value: () => Obj,
  merge: (item: Obj) => Obj,
): Obj[] {
  if (!hasMatch && operation !== "MERGE" && operation !== "REMOVE" && operation !== "ADD") {
    if (operation === "INSERT_AFTER") return [...list, value()];
    return operation === "REPLACE" ? [...list] : [value(), ...list];
  }
  const first = list.findIndex(matches);
  switch (operation) {
    case "MERGE":
      return list.map((item) => matches(item) ? merge(item) : item);
    case "REMOVE":
      return list.filter((item) => !matches(item));
    case "ADD":
      return [...list, value()];
    case "INSERT_FIRST":
      return first < 0 ? [...list] : [value(), ...list];
    case "INSERT_BEFORE":
      return first < 0 ? [...list] : [...list.slice(0, first), value(), ...list.slice(first)];
    case "INSERT_AFTER":
      return first < 0 ? [...list] : [...list.slice(0, first + 1), value(), ...list.slice(first + 1)];
    case "REPLACE":
      return first < 0 ? [...list] : [...list.slice(0, first), value(), ...list.slice(first + 1)];
  }
}

/** `patchList` with `patch`'s operation and value, read and merged as Envoy message `typeName`. */
export function patchTypedList(
  list: readonly Obj[],
  patch: EnvoyConfigObjectPatch,
  hasMatch: boolean,
  matches: (item: Obj) => boolean,
  typeName: string,
  root: protobuf.Root,
): Obj[] {
  const type = root.lookupType(typeName);
  const value = () => patchObject(type, patch.patch.value ?? {}, root);
  return patchList(
    list,
    patch.patch.operation,
    hasMatch,
    matches,
    value,
    (item) => mergeInto(type, item, value(), root),
  );
}
