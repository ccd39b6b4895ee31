/**
 * Envoy `Secret` resources as SDS sends them, encoded without Envoy's schema: the agent serves only inline PEM
 * certificate chains, keys and trusted CAs, and holding the whole schema for those would keep it resident.
 *
 * @module
 */
import { lenFieldSize, utf8Bytes, WireWriter } from "@mesh/proto/_wire";
import { TYPE_URL } from "@mesh/proto/type_urls";

/** Field numbers of `Secret`, `TlsCertificate`, `CertificateValidationContext` and `DataSource`. */
const FIELD = {
  secret: { name: 1, tlsCertificate: 2, validationContext: 4 },
  tlsCertificate: { certificateChain: 1, privateKey: 2 },
  validationContext: { trustedCa: 1 },
  dataSource: { inlineString: 3 },
  any: { typeUrl: 1, value: 2 },
} as const;

type Loose = Record<string, unknown>;

/** One length-delimited field, its payload already encoded. */
type Part = readonly [field: number, payload: Uint8Array];

function encodeParts(parts: readonly Part[]): Uint8Array {
  const writer = new WireWriter(
    parts.reduce((sum, [field, value]) => sum + lenFieldSize(field, value.length), 0),
  );
  for (const [field, value] of parts) writer.lenField(field, value);
  return writer.finish();
}

function onlyKeys(object: unknown, keys: readonly string[], where: string): Loose {
  if (object === null || typeof object !== "object" || Array.isArray(object)) {
    throw new TypeError(`${where} must be an object`);
  }
  const extra = Object.keys(object).filter((k) => !keys.includes(k));
  if (extra.length > 0) {
    throw new TypeError(`${where} has fields "${extra.join('", "')}": expected only "${keys.join('", "')}"`);
  }
  return object as Loose;
}

/** A `DataSource` holding `inline_string`. */
function inlineString(source: unknown, where: string): Uint8Array {
  const { inline_string: text } = onlyKeys(source, ["inline_string"], where);
  if (typeof text !== "string") throw new TypeError(`${where}.inline_string must be a string`);
  return encodeParts(text === "" ? [] : [[FIELD.dataSource.inlineString, utf8Bytes(text)]]);
}

/**
 * The `google.protobuf.Any` of an Envoy Secret given as `{ name, tls_certificate: { certificate_chain,
 * private_key } }` or `{ name, validation_context: { trusted_ca } }`, each data source `{ inline_string }`.
 *
 * @throws {TypeError} for any other shape
 */
export function encodeSecretAny(secret: Loose): Uint8Array {
  const { name, tls_certificate: tls, validation_context: validation } = onlyKeys(
    secret,
    ["name", "tls_certificate", "validation_context"],
    "Secret",
  );
  if (typeof name !== "string") throw new TypeError("Secret.name must be a string");
  const parts: Part[] = name === "" ? [] : [[FIELD.secret.name, utf8Bytes(name)]];
  if (tls !== undefined) {
    const where = "Secret.tls_certificate";
    const { certificate_chain: chain, private_key: key } = onlyKeys(
      tls,
      ["certificate_chain", "private_key"],
      where,
    );
    const fields: Part[] = [];
    if (chain !== undefined) {
      fields.push([FIELD.tlsCertificate.certificateChain, inlineString(chain, `${where}.certificate_chain`)]);
    }
    if (key !== undefined) {
      fields.push([FIELD.tlsCertificate.privateKey, inlineString(key, `${where}.private_key`)]);
    }
    parts.push([FIELD.secret.tlsCertificate, encodeParts(fields)]);
  }
  if (validation !== undefined) {
    const where = "Secret.validation_context";
    const { trusted_ca: ca } = onlyKeys(validation, ["trusted_ca"], where);
    const fields: Part[] = ca === undefined
      ? []
      : [[FIELD.validationContext.trustedCa, inlineString(ca, `${where}.trusted_ca`)]];
    parts.push([FIELD.secret.validationContext, encodeParts(fields)]);
  }
  if (tls !== undefined && validation !== undefined) {
    throw new TypeError("Secret has both tls_certificate and validation_context: expected one of them");
  }
  return encodeParts([[FIELD.any.typeUrl, utf8Bytes(TYPE_URL.secret)], [
    FIELD.any.value,
    encodeParts(parts),
  ]]);
}
