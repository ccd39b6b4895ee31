/**
 * `DISCOVERY_ALLOW_METADATA_CERTS_DR_MUTUAL_TLS`: a sidecar whose node metadata names client certificate files
 * (`TLS_CLIENT_CERT_CHAIN`, `TLS_CLIENT_KEY`, `TLS_CLIENT_ROOT_CERT`, mounted in its pod) uses them instead of
 * the files a DestinationRule's `MUTUAL` TLS names, as the reference allows for migration. Each file the metadata
 * does not name stays the rule's.
 *
 * @module
 */
import type { ClientTLSSettings } from "@mesh/shared/config/networking/tls_settings";
import type { Proxy } from "../../model/proxy.ts";
import type { UpstreamTlsPlan } from "./upstream_tls.ts";

/** The node metadata keys of the certificate files, and the DestinationRule fields they replace. */
const METADATA_FILES = [
  ["TLS_CLIENT_CERT_CHAIN", "clientCertificate"],
  ["TLS_CLIENT_KEY", "privateKey"],
  ["TLS_CLIENT_ROOT_CERT", "caCertificates"],
] as const;

/** The certificate files `proxy`'s metadata names; undefined when it names none. */
export function metadataCertFiles(proxy: Proxy): Partial<ClientTLSSettings> | undefined {
  const out: Record<string, string> = {};
  for (const [key, field] of METADATA_FILES) {
    const value = proxy.metadata.raw[key];
    if (typeof value === "string" && value !== "") out[field] = value;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** `tls` with the metadata's files in place of a `MUTUAL` rule's own; any other plan unchanged. */
export function withMetadataCerts(tls: UpstreamTlsPlan, files: Partial<ClientTLSSettings>): UpstreamTlsPlan {
  if (tls.kind !== "files" || tls.settings.mode !== "MUTUAL" || tls.settings.credentialName) return tls;
  return { ...tls, settings: { ...tls.settings, ...files } };
}
