/**
 * Envoy reads its bootstrap as proto3 JSON, where well-known types have short forms: a Duration is `"1.5s"`,
 * a wrapper (`BoolValue`, `UInt32Value`, …) is its bare value, a Struct is plain JSON. Our encoder takes the
 * object forms (`{ seconds, nanos }`, `{ value }`, Struct fields); this turns a proto3-JSON document into them,
 * guided by the message schema, so user-written bootstraps (templates, overrides) are checked as Envoy would
 * read them. Values already in object form are left as they are.
 *
 * @module
 */
import type protobuf from "protobufjs";
import { jsonToStruct } from "./struct_json.ts";
import { messageTypeForUrl } from "./any_codec.ts";

const WRAPPERS = new Set([
  ".google.protobuf.BoolValue",
  ".google.protobuf.UInt32Value",
  ".google.protobuf.UInt64Value",
  ".google.protobuf.Int32Value",
  ".google.protobuf.Int64Value",
  ".google.protobuf.DoubleValue",
  ".google.protobuf.FloatValue",
  ".google.protobuf.StringValue",
  ".google.protobuf.BytesValue",
]);

/** proto3 JSON also accepts lowerCamelCase field names. */
const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

const DURATION = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;

function duration(text: string): { seconds: string; nanos: number } | string {
  const match = DURATION.exec(text);
  if (!match) return text; // left for the encoder to reject with its field path
  const nanos = Number((match[3] ?? "").padEnd(9, "0"));
  return { seconds: `${match[1]}${match[2]}`, nanos: match[1] === "-" ? -nanos : nanos };
}

function convertValue(field: protobuf.Field, value: unknown, root: protobuf.Root): unknown {
  const type = field.resolve().resolvedType;
  if (type === null || !("fields" in type)) return value;
  return convertMessage(type as protobuf.Type, value, root);
}

/** `value` (proto3 JSON of message `type`) with well-known types in the encoder's object forms. */
export function fromProtoJson(type: protobuf.Type, value: unknown, root: protobuf.Root): unknown {
  return convertMessage(type, value, root);
}

function convertMessage(type: protobuf.Type, value: unknown, root: protobuf.Root): unknown {
  const name = type.fullName;
  if (name === ".google.protobuf.Duration" && typeof value === "string") return duration(value);
  if (WRAPPERS.has(name) && (typeof value !== "object" || value === null)) return { value };
  if (name === ".google.protobuf.Struct" && typeof value === "object" && value !== null) {
    return jsonToStruct(value as never);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const object = value as Record<string, unknown>;
  if (name === ".google.protobuf.Any" && typeof object["@type"] === "string") {
    let inner: protobuf.Type;
    try {
      inner = messageTypeForUrl(object["@type"], root);
    } catch {
      return value;
    }
    const { "@type": typeUrl, ...rest } = object;
    return { "@type": typeUrl, ...(convertMessage(inner, rest, root) as Record<string, unknown>) };
  }
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(object)) {
    const field = type.fields[key] ?? type.fieldsArray.find((f) => camelCase(f.name) === key);
    if (field === undefined) {
      out[key] = raw;
    } else if (field.map && typeof raw === "object" && raw !== null) {
      out[key] = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, convertValue(field, v, root)]));
    } else if (field.repeated && Array.isArray(raw)) {
      out[key] = raw.map((v) => convertValue(field, v, root));
    } else {
      out[key] = convertValue(field, raw, root);
    }
  }
  return out;
}
