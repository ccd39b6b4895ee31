/**
 * The name table of the DNS proxy (`proto/mesh/nds.proto`): its two type URLs, and encoding and decoding of
 * the message and of the `google.protobuf.Any` that carries it in a discovery response.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/** Our type URL of the name table; mesh-agent subscribes to it. */
export const NAME_TABLE_TYPE_URL = "type.googleapis.com/mesh.networking.nds.v1.NameTable";

/** Istio's type URL of the same message, served so Istio's agent with DNS capture gets its table too. */
export const ISTIO_NAME_TABLE_TYPE_URL = "type.googleapis.com/istio.networking.nds.v1.NameTable";

/** Both type URLs of the name table. */
export const NAME_TABLE_TYPE_URLS: ReadonlySet<string> = new Set([
  NAME_TABLE_TYPE_URL,
  ISTIO_NAME_TABLE_TYPE_URL,
]);

/** What is known of one host. */
export interface NameInfo {
  /** Addresses, IPv4 and IPv6. */
  readonly ips: readonly string[];
  /** The registry that reported the host. */
  readonly registry: string;
  /** Orchestrator services: the service's name; else empty. */
  readonly shortname: string;
  /** Orchestrator services: the service's namespace; else empty. */
  readonly namespace: string;
}

/** Hostnames (no trailing dot) to what is known of them. */
export type NameTable = Readonly<Record<string, NameInfo>>;

const root = new protobuf.Root();
root.loadSync(fileURLToPath(new URL("./mesh/nds.proto", import.meta.url)), { keepCase: true });
const TableType = root.lookupType("mesh.networking.nds.v1.NameTable");
// google.protobuf.Any's two fields, on their own: the name table needs no other well-known type.
const AnyType = new protobuf.Type("Any")
  .add(new protobuf.Field("type_url", 1, "string"))
  .add(new protobuf.Field("value", 2, "bytes"));
new protobuf.Root().define("google.protobuf").add(AnyType);

/** Encodes a name table. */
export function encodeNameTable(table: NameTable): Uint8Array {
  return TableType.encode(TableType.fromObject({ table })).finish();
}

/**
 * Decodes a name table.
 *
 * @throws {TypeError} when the bytes are not a name table
 */
export function decodeNameTable(bytes: Uint8Array): NameTable {
  let decoded: { table?: Record<string, Partial<NameInfo>> };
  try {
    decoded = TableType.toObject(TableType.decode(bytes), { defaults: true, arrays: true });
  } catch (cause) {
    throw new TypeError(`Invalid name table: ${(cause as Error).message}`, { cause });
  }
  const out: Record<string, NameInfo> = {};
  for (const [host, info] of Object.entries(decoded.table ?? {})) {
    out[host] = {
      ips: info.ips ?? [],
      registry: info.registry ?? "",
      shortname: info.shortname ?? "",
      namespace: info.namespace ?? "",
    };
  }
  return out;
}

/** The bytes of a `google.protobuf.Any` holding `table` under `typeUrl`. */
export function encodeNameTableAny(typeUrl: string, table: NameTable): Uint8Array {
  return AnyType.encode({ type_url: typeUrl, value: encodeNameTable(table) }).finish();
}

/**
 * Decodes the name table in an Any of either type URL.
 *
 * @throws {TypeError} when the Any holds another type or bytes that are not a name table
 */
export function decodeNameTableAny(bytes: Uint8Array): NameTable {
  let any: { type_url?: string; value?: Uint8Array };
  try {
    any = AnyType.decode(bytes) as typeof any;
  } catch (cause) {
    throw new TypeError(`Invalid Any: ${(cause as Error).message}`, { cause });
  }
  if (!NAME_TABLE_TYPE_URLS.has(any.type_url ?? "")) {
    throw new TypeError(
      `Any of type "${(any.type_url ?? "").slice(0, 100)}": expected "${NAME_TABLE_TYPE_URL}"`,
    );
  }
  return decodeNameTable(any.value ?? new Uint8Array());
}
