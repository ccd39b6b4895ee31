import { childPath, type ValidationReport } from "../validation/report.ts";
import { booleanAt, objectAt, stringAt } from "../validation/fields.ts";
import { enumAt, stringListAt } from "../validation/values.ts";

/** TLS modes of a client (sidecar or gateway) talking to an upstream service. */
/** Client TLS modes; `MESH_MUTUAL` is our name for Istio's `ISTIO_MUTUAL`, and both are accepted. */
export type ClientTLSMode = "DISABLE" | "SIMPLE" | "MUTUAL" | "ISTIO_MUTUAL" | "MESH_MUTUAL";

/** TLS settings for connections to an upstream service. */
export interface ClientTLSSettings {
  /** TLS mode of the connection (default `DISABLE`); `ISTIO_MUTUAL` uses the mesh's own certificates. */
  readonly mode?: ClientTLSMode;
  /** Path of the client certificate file; required with `MUTUAL` unless `credentialName` is set. */
  readonly clientCertificate?: string;
  /** Path of the client's private key file; required with `MUTUAL` unless `credentialName` is set. */
  readonly privateKey?: string;
  /** Path of the CA certificates file that verifies the server's certificate. */
  readonly caCertificates?: string;
  /** Name of a secret holding the client certificate, key and CA (gateways only). */
  readonly credentialName?: string;
  /** Names, one of which the server certificate's subject alternative names must contain. */
  readonly subjectAltNames?: readonly string[];
  /** SNI sent in the TLS handshake. */
  readonly sni?: string;
}

/** TLS modes of a gateway server. */
/** Gateway server TLS modes; `MESH_MUTUAL` is our name for Istio's `ISTIO_MUTUAL`, and both are accepted. */
export type ServerTLSMode =
  | "PASSTHROUGH"
  | "SIMPLE"
  | "MUTUAL"
  | "AUTO_PASSTHROUGH"
  | "ISTIO_MUTUAL"
  | "MESH_MUTUAL";

/** Whether a mode is mesh mTLS (the workload's own certificate, verified against the mesh roots). */
export function isMeshMutual(mode: string | undefined): boolean {
  return mode === "ISTIO_MUTUAL" || mode === "MESH_MUTUAL";
}

/** TLS protocol versions a gateway server may be limited to. */
export type TLSProtocol = "TLS_AUTO" | "TLSV1_0" | "TLSV1_1" | "TLSV1_2" | "TLSV1_3";

/** TLS settings of a gateway server. */
export interface ServerTLSSettings {
  /** Redirect plain HTTP requests to HTTPS with a 301. */
  readonly httpsRedirect?: boolean;
  /** Defaults to PASSTHROUGH. */
  readonly mode?: ServerTLSMode;
  /**
   * Path of the server certificate file; required with `SIMPLE` and `MUTUAL` unless `credentialName` is set.
   */
  readonly serverCertificate?: string;
  /**
   * Path of the server's private key file; required with `SIMPLE` and `MUTUAL` unless `credentialName` is
   * set.
   */
  readonly privateKey?: string;
  /**
   * Path of the CA certificates file that verifies clients; required with `MUTUAL` unless `credentialName` is
   * set.
   */
  readonly caCertificates?: string;
  /** Name of a secret holding the server certificate, key and CA, used instead of the file paths. */
  readonly credentialName?: string;
  /** Names, one of which a client certificate's subject alternative names must contain. */
  readonly subjectAltNames?: readonly string[];
  /** Base64 SHA-256 hashes of accepted client certificates' public keys (SPKI). */
  readonly verifyCertificateSpki?: readonly string[];
  /** Hex SHA-256 hashes of accepted client certificates. */
  readonly verifyCertificateHash?: readonly string[];
  /** Lowest TLS version accepted. */
  readonly minProtocolVersion?: TLSProtocol;
  /** Highest TLS version accepted. */
  readonly maxProtocolVersion?: TLSProtocol;
  /** Cipher suites offered; unset uses the proxy's defaults. */
  readonly cipherSuites?: readonly string[];
}

const CLIENT_MODES: readonly ClientTLSMode[] = ["DISABLE", "SIMPLE", "MUTUAL", "ISTIO_MUTUAL", "MESH_MUTUAL"];
const SERVER_MODES: readonly ServerTLSMode[] = [
  "PASSTHROUGH",
  "SIMPLE",
  "MUTUAL",
  "AUTO_PASSTHROUGH",
  "ISTIO_MUTUAL",
  "MESH_MUTUAL",
];
const PROTOCOLS: readonly TLSProtocol[] = ["TLS_AUTO", "TLSV1_0", "TLSV1_1", "TLSV1_2", "TLSV1_3"];

/**
 * Validates client TLS settings: MUTUAL needs a client certificate and key unless `credentialName` is set,
 * and `credentialName` excludes file-based certificates.
 */
export function clientTlsAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): ClientTLSSettings | undefined {
  const obj = objectAt(report, path, value, [
    "mode",
    "clientCertificate",
    "privateKey",
    "caCertificates",
    "credentialName",
    "subjectAltNames",
    "sni",
  ]);
  if (obj === undefined) return undefined;
  const mode = enumAt(report, childPath(path, "mode"), obj.mode, CLIENT_MODES) ?? "DISABLE";
  const files: Record<string, string | undefined> = {};
  for (const f of ["clientCertificate", "privateKey", "caCertificates", "credentialName", "sni"]) {
    files[f] = stringAt(report, childPath(path, f), obj[f]) || undefined;
  }
  stringListAt(report, childPath(path, "subjectAltNames"), obj.subjectAltNames);
  if ((mode === "SIMPLE" || mode === "MUTUAL") && files.credentialName) {
    for (const f of ["clientCertificate", "privateKey", "caCertificates"]) {
      if (files[f]) report.error(childPath(path, f), `cannot be set together with credentialName`);
    }
  } else if (mode === "MUTUAL") {
    if (!files.clientCertificate) {
      report.error(childPath(path, "clientCertificate"), "client certificate required for mutual TLS");
    }
    if (!files.privateKey) report.error(childPath(path, "privateKey"), "private key required for mutual TLS");
  } else if (isMeshMutual(mode)) {
    for (const f of ["clientCertificate", "privateKey", "caCertificates", "credentialName"]) {
      if (files[f]) {
        report.warn(childPath(path, f), `ignored in ${mode} mode, which uses the mesh's certificates`);
      }
    }
  }
  return obj as ClientTLSSettings;
}

/**
 * Validates gateway server TLS settings: SIMPLE needs a certificate and key, MUTUAL also a CA bundle (all
 * three may come from `credentialName` instead); ISTIO_MUTUAL takes no certificate files.
 */
export function serverTlsAt(
  report: ValidationReport,
  path: string,
  value: unknown,
): ServerTLSSettings | undefined {
  const obj = objectAt(report, path, value, [
    "httpsRedirect",
    "mode",
    "serverCertificate",
    "privateKey",
    "caCertificates",
    "credentialName",
    "subjectAltNames",
    "verifyCertificateSpki",
    "verifyCertificateHash",
    "minProtocolVersion",
    "maxProtocolVersion",
    "cipherSuites",
  ]);
  if (obj === undefined) return undefined;
  booleanAt(report, childPath(path, "httpsRedirect"), obj.httpsRedirect);
  const mode = enumAt(report, childPath(path, "mode"), obj.mode, SERVER_MODES) ?? "PASSTHROUGH";
  const files: Record<string, string | undefined> = {};
  for (const f of ["serverCertificate", "privateKey", "caCertificates", "credentialName"]) {
    files[f] = stringAt(report, childPath(path, f), obj[f]) || undefined;
  }
  for (const f of ["subjectAltNames", "verifyCertificateSpki", "verifyCertificateHash", "cipherSuites"]) {
    stringListAt(report, childPath(path, f), obj[f]);
  }
  const min = enumAt(report, childPath(path, "minProtocolVersion"), obj.minProtocolVersion, PROTOCOLS);
  const max = enumAt(report, childPath(path, "maxProtocolVersion"), obj.maxProtocolVersion, PROTOCOLS);
  if (
    min && max && min !== "TLS_AUTO" && max !== "TLS_AUTO" && PROTOCOLS.indexOf(min) > PROTOCOLS.indexOf(max)
  ) {
    report.error(
      childPath(path, "minProtocolVersion"),
      `minProtocolVersion ${min} is above maxProtocolVersion ${max}`,
    );
  }
  if (isMeshMutual(mode)) {
    for (const f of ["serverCertificate", "privateKey", "caCertificates"]) {
      if (files[f]) {
        report.error(childPath(path, f), `${mode} TLS uses the mesh's certificates; remove this field`);
      }
    }
  } else if ((mode === "SIMPLE" || mode === "MUTUAL") && !files.credentialName) {
    if (!files.serverCertificate) {
      report.error(childPath(path, "serverCertificate"), `${mode} TLS requires a server certificate`);
    }
    if (!files.privateKey) report.error(childPath(path, "privateKey"), `${mode} TLS requires a private key`);
    if (mode === "MUTUAL" && !files.caCertificates) {
      report.error(childPath(path, "caCertificates"), "MUTUAL TLS requires a client CA bundle");
    }
  }
  return { ...obj, mode } as ServerTLSSettings;
}
