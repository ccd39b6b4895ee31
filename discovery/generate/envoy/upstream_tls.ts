/**
 * TLS from a sidecar to a cluster's endpoints, as Envoy transport sockets: a DestinationRule's `tls` (DISABLE,
 * SIMPLE, MUTUAL, ISTIO_MUTUAL) or, when no rule sets TLS and the mesh enables automatic mTLS, mesh mTLS to
 * the endpoints labelled for the mesh and plaintext to the others (EDS marks each endpoint; see
 * `TLS_MODE_METADATA`).
 *
 * Mesh mTLS presents the workload's certificate from SDS `default`, trusts SDS `ROOTCA`, and accepts only the
 * destination's SPIFFE identities, so a compromised endpoint of another service cannot impersonate it.
 *
 * @module
 */
import type { ClientTLSSettings } from "@mesh/shared/config/networking/tls_settings";
import { jsonToStruct } from "@mesh/proto/struct_json";
import { TYPE_URL } from "@mesh/proto/type_urls";
import type { EnvoyObject } from "../route_match.ts";
import { ROOT_SECRET_NAME, sdsSecretConfig, WORKLOAD_SECRET_NAME } from "./sds_config.ts";

/** ALPN a mesh mTLS client offers, as Istio sidecars do, so either kind of server accepts it. */
export const MESH_ALPN: readonly string[] = Object.freeze(["istio-peer-exchange", "istio"]);

/** The mesh ALPN without the TCP metadata exchange protocol (`DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE=false`). */
export const MESH_ALPN_NO_EXCHANGE: readonly string[] = Object.freeze(["istio"]);

/** The ALPN of mesh mTLS, with `istio-peer-exchange` only when TCP metadata exchange is on. */
export function meshAlpn(peerExchange: boolean): readonly string[] {
  return peerExchange ? MESH_ALPN : MESH_ALPN_NO_EXCHANGE;
}

/** The endpoint metadata filter that `transport_socket_matches` reads, and the value of a mesh endpoint. */
export const TLS_MODE_METADATA = { filter: "envoy.transport_socket_match", key: "tlsMode", mesh: "istio" };

/** The mesh mTLS a cluster offers: its SNI, the identities it accepts and the ALPN it offers. */
export interface MeshTlsPlan {
  readonly sni: string;
  readonly identities: readonly string[];
  readonly alpn: readonly string[];
}

/** What a cluster's upstream TLS is made of, resolved; its stable JSON is part of the cluster's cache key. */
export type UpstreamTlsPlan =
  | { readonly kind: "none" }
  /** Mesh mTLS to every endpoint (ISTIO_MUTUAL). */
  | { readonly kind: "mesh" } & MeshTlsPlan
  /** Mesh mTLS to endpoints labelled for the mesh, plaintext to the rest. */
  | { readonly kind: "auto" } & MeshTlsPlan
  /** SIMPLE or MUTUAL TLS with the files the DestinationRule names. */
  | { readonly kind: "files"; readonly settings: ClientTLSSettings; readonly sni?: string };

/** The SNI Istio sidecars use for mesh mTLS to a cluster: `outbound_.<port>_.<subset>_.<host>`. */
export function meshSni(hostname: string, port: number, subset: string): string {
  return `outbound_.${port}_.${subset}_.${hostname}`;
}

/**
 * The TLS plan of a cluster: the rule's TLS when it sets one, else automatic mTLS when the mesh enables it
 * (never for services outside the mesh), else none.
 */
export function upstreamTlsPlan(
  tls: ClientTLSSettings | undefined,
  options: {
    readonly autoMtls: boolean;
    readonly meshExternal: boolean;
    readonly sni: string;
    readonly identities: readonly string[];
    /** `DISCOVERY_ENABLE_TCP_METADATA_EXCHANGE`: mesh mTLS offers `istio-peer-exchange`. */
    readonly peerExchange: boolean;
  },
): UpstreamTlsPlan {
  const alpn = meshAlpn(options.peerExchange);
  switch (tls?.mode) {
    case "DISABLE":
      return { kind: "none" };
    case "ISTIO_MUTUAL":
    case "MESH_MUTUAL":
      return { kind: "mesh", sni: tls.sni ?? options.sni, identities: options.identities, alpn };
    case "SIMPLE":
    case "MUTUAL":
      return { kind: "files", settings: tls, ...(tls.sni ? { sni: tls.sni } : {}) };
    default:
      return options.autoMtls && !options.meshExternal
        ? { kind: "auto", sni: options.sni, identities: options.identities, alpn }
        : { kind: "none" };
  }
}

function tlsSocket(context: EnvoyObject): EnvoyObject {
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: { "@type": TYPE_URL.upstreamTlsContext, ...context },
  };
}

function meshTlsContext({ sni, identities, alpn }: MeshTlsPlan): EnvoyObject {
  return {
    common_tls_context: {
      tls_certificate_sds_secret_configs: [sdsSecretConfig(WORKLOAD_SECRET_NAME)],
      combined_validation_context: {
        default_validation_context: identities.length === 0 ? {} : {
          match_typed_subject_alt_names: identities.map((id) => ({
            san_type: "URI",
            matcher: { exact: id },
          })),
        },
        validation_context_sds_secret_config: sdsSecretConfig(ROOT_SECRET_NAME),
      },
      alpn_protocols: [...alpn],
    },
    sni,
  };
}

function fileTlsContext(settings: ClientTLSSettings, sni: string | undefined): EnvoyObject {
  const sans = settings.subjectAltNames ?? [];
  const validation: EnvoyObject = {
    ...(settings.caCertificates ? { trusted_ca: { filename: settings.caCertificates } } : {}),
    ...(sans.length > 0
      ? {
        match_typed_subject_alt_names: sans.flatMap((san) =>
          ["DNS", "URI"].map((type) => ({ san_type: type, matcher: { exact: san } }))
        ),
      }
      : {}),
  };
  const certificates = settings.mode === "MUTUAL" && settings.clientCertificate && settings.privateKey
    ? [{
      certificate_chain: { filename: settings.clientCertificate },
      private_key: { filename: settings.privateKey },
    }]
    : [];
  return {
    common_tls_context: {
      ...(certificates.length > 0 ? { tls_certificates: certificates } : {}),
      ...(Object.keys(validation).length > 0 ? { validation_context: validation } : {}),
    },
    ...(sni ? { sni } : {}),
  };
}

/** The Cluster fields that carry a TLS plan: `transport_socket`, or `transport_socket_matches` for auto mTLS. */
export function upstreamTlsFields(plan: UpstreamTlsPlan): EnvoyObject {
  switch (plan.kind) {
    case "none":
      return {};
    case "mesh":
      return { transport_socket: tlsSocket(meshTlsContext(plan)) };
    case "files":
      return { transport_socket: tlsSocket(fileTlsContext(plan.settings, plan.sni)) };
    case "auto":
      return {
        transport_socket_matches: [
          {
            name: "tlsMode-istio",
            match: jsonToStruct({ [TLS_MODE_METADATA.key]: TLS_MODE_METADATA.mesh }),
            transport_socket: tlsSocket(meshTlsContext(plan)),
          },
          {
            name: "tlsMode-disabled",
            match: jsonToStruct({}),
            transport_socket: {
              name: "envoy.transport_sockets.raw_buffer",
              typed_config: { "@type": TYPE_URL.rawBuffer },
            },
          },
        ],
      };
  }
}
