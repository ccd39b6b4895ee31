/**
 * The certificate authority and the certificates around it, wired for the composition root: the CA settings
 * and files (checked before anything opens), the CA and its federation with other trust domains, the serving
 * certificates it or the orchestrator's CA issues, the secure xDS port, and which roots each listener and
 * writer hands out.
 *
 * @module
 */
import type { Component } from "@mesh/shared/lifecycle";
import type { Logger } from "@mesh/shared/log/logger";
import type { LogManager } from "@mesh/shared/log/log_manager";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { DiscoveryOptions } from "./cli/discovery_options.ts";
import {
  type BundleEndpoint,
  type CaEnvSettings,
  caSettingsFromEnv,
  CertificateAuthority,
  EXTERNAL_CA_ORCH,
  externalCaFromEnv,
  FederatedBundles,
  parseBundleEndpoints,
  readCaCertFile,
  securePortNames,
} from "./ca/mod.ts";
import type { MeshWatcher } from "./config/mod.ts";
import {
  ORCH_CA_FILE,
  ORCH_CERT_PROVIDERS,
  ORCH_SERVING_SIGNER,
  orchServingCertIssuer,
} from "./orch/orch_serving_cert.ts";
import type { Orchestrator } from "./orch/orchestrator.ts";
import { secureXdsPort, type SecureXdsPortOptions } from "./secure_xds_port.ts";

/** Where the external CA's root is read from when `--caCertFile` is not given, as the reference's. */
const EXTERNAL_CA_ROOT_FILE = "./etc/external-ca-cert/root-cert.pem";

/** Lifetime of the secure port's serving certificate (cut at the CA's own expiry). */
const SECURE_PORT_CERT_TTL_MS = 365 * 24 * 3600 * 1000;

/** The CA's settings, checked at startup before any file is read. */
export interface CaPlan {
  /** `ENABLE_CA_SERVER`. */
  readonly enabled: boolean;
  /** The CA's settings, when it is enabled. */
  readonly settings?: CaEnvSettings;
  /** `EXTERNAL_CA`: the orchestrator's CSR API signs workload certificates. */
  readonly external?: { readonly signerName: string };
  /** `DISCOVERY_CERT_PROVIDER=orchestrator`: the orchestrator's CA signs this server's certificate. */
  readonly orchSigned: boolean;
  /** Names the secure port's serving certificate carries. */
  readonly securePortNames: readonly string[];
}

/** Reads and checks the CA settings; a setting that needs the orchestrator's API without it is refused. */
export function caPlanFromEnv(options: DiscoveryOptions): CaPlan {
  const { env } = options;
  const enabled = env.bool("ENABLE_CA_SERVER");
  const settings = enabled ? caSettingsFromEnv(env) : undefined;
  const external = enabled ? externalCaFromEnv(env) : undefined;
  if (external && !options.registries.includes("Orchestrator")) {
    throw new RangeError(
      `EXTERNAL_CA=${EXTERNAL_CA_ORCH} needs the orchestrator's API: add Orchestrator to --registries`,
    );
  }
  // DISCOVERY_CERT_PROVIDER=orchestrator: the orchestrator's CA signs this server's certificate.
  const orchSigned = enabled && ORCH_CERT_PROVIDERS.includes(env.string("DISCOVERY_CERT_PROVIDER"));
  if (orchSigned && !options.registries.includes("Orchestrator")) {
    throw new RangeError(
      `DISCOVERY_CERT_PROVIDER=${env.string("DISCOVERY_CERT_PROVIDER")} needs the orchestrator's API: ` +
        "add Orchestrator to --registries",
    );
  }
  return {
    enabled,
    ...(settings ? { settings } : {}),
    ...(external ? { external } : {}),
    orchSigned,
    securePortNames: securePortNames(options.namespace, options.domain, env.string("MESHD_CUSTOM_HOST")),
  };
}

/** The certificate files the CA settings name, read at startup. */
export interface CaFiles {
  /** `--caCertFile`; empty when not given. */
  readonly caCertPem: string;
  /** The external CA's root; empty without an external CA. */
  readonly externalRootPem: string;
  /** The orchestrator's CA, when it signs this server's certificate; else empty. */
  readonly orchCaPem: string;
  /** `SPIFFE_BUNDLE_ENDPOINTS`. */
  readonly bundleEndpoints: readonly BundleEndpoint[];
}

/** Reads `--caCertFile`, the external CA's root and the orchestrator's CA as `plan` needs them. */
export async function readCaFiles(plan: CaPlan, options: DiscoveryOptions): Promise<CaFiles> {
  const caCertPem = options.caCertFile ? await readCaCertFile(options.caCertFile) : "";
  // The external CA's root, as the reference finds it: --caCertFile, else the mounted external CA bundle.
  const externalRootPem = !plan.external
    ? ""
    : caCertPem || await readCaCertFile(EXTERNAL_CA_ROOT_FILE, `the external CA's root (--caCertFile unset)`);
  const orchCaPem = plan.orchSigned
    ? await readCaCertFile(ORCH_CA_FILE, "the orchestrator's CA (DISCOVERY_CERT_PROVIDER)")
    : "";
  const bundleEndpoints = parseBundleEndpoints(options.env.string("SPIFFE_BUNDLE_ENDPOINTS"));
  return { caCertPem, externalRootPem, orchCaPem, bundleEndpoints };
}

/** What the CA is wired to. */
export interface CaInputs {
  readonly plan: CaPlan;
  readonly files: CaFiles;
  readonly options: DiscoveryOptions;
  /** The mesh config: the trust domain and its aliases, unless `--trustDomain` is given. */
  readonly mesh: MeshWatcher;
  readonly orch?: Orchestrator;
  readonly orchModule?: typeof import("./orch/mod.ts");
  readonly logs: LogManager;
  readonly metrics: Metrics;
  readonly log: Logger;
}

/** A serving certificate issued for a listener. */
export type ServingCertIssuer = (
  dnsNames: readonly string[],
) => Promise<{ cert: string; key: string; caPem: string }>;

/** The CA, built when its component starts, and the roots and certificates read from it. */
export interface CaWiring {
  /** The federated trust domains' bundles, when `SPIFFE_BUNDLE_ENDPOINTS` names any and the CA runs. */
  readonly federation?: FederatedBundles;
  /** Issues serving certificates: the orchestrator's CA when it signs this server's, else the mesh CA. */
  readonly issueServingCert?: ServingCertIssuer;
  /** The CA once its component has started; undefined before, or when it is off. */
  ca(): CertificateAuthority | undefined;
  /** The roots that verify the server: the CA's, then the external CA's or `--caCertFile`'s. */
  servedRootsPem(): string;
  /** The federation and the CA, in start order (none when the CA is off). */
  components(): Component[];
  /** The secure xDS port serving `xds` (none when the CA is off). */
  securePort(xds: SecureXdsPortOptions["xds"]): Component[];
  /**
   * The roots the webhook configurations carry: `--tlsCertFile`'s signer is `--caCertFile`; an issued
   * certificate's roots are the CA's, which keep a rotated root trusted while certificates it signed are in
   * use; else the webhook's self-signed root.
   */
  webhookRootsPem(selfSignedPem: () => string | undefined): string;
  /**
   * The roots the root certificate ConfigMaps carry: the mesh CA's, which an orchestrator-signed server does
   * not hand out (the reference's fetchCARoot; workloads then trust the orchestrator's CA). None then.
   */
  configMapRoots():
    | { caRootsPem: () => string; onRootsChanged: (listener: () => void) => () => void }
    | undefined;
}

/** Wires the CA from its checked settings and files; nothing starts until its components do. */
export function wireCa(w: CaInputs): CaWiring {
  const { plan, files, options, orch, orchModule, logs, log } = w;
  const { env } = options;
  const { caCertPem, externalRootPem, orchCaPem } = files;
  const caSettings = plan.settings;
  const externalCa = plan.external;
  const trustDomain = () => options.trustDomain || w.mesh.current().trustDomain;
  const federation = plan.enabled && files.bundleEndpoints.length > 0
    ? new FederatedBundles({ endpoints: files.bundleEndpoints, log: logs.scope("serverca") })
    : undefined;

  // USE_REMOTE_CERTS: the plugged-in CA from the `cacerts` Secret of the cluster read, when it exists there.
  const remoteCaCerts = async () => {
    if (!env.bool("USE_REMOTE_CERTS")) return undefined;
    if (!orch) {
      log.warn(
        "USE_REMOTE_CERTS is on but no orchestrator is read: the CA's certificates come from ROOT_CA_DIR",
      );
      return undefined;
    }
    const { CA_CERTS_TIMEOUT_MS, readCaCertsSecret } = await import("./orch/ca_certs_secret.ts");
    const found = await readCaCertsSecret(orch.http(CA_CERTS_TIMEOUT_MS), options.namespace);
    log.info(found ? "CA certificates found in the orchestrator" : "no CA certificates in the orchestrator", {
      secret: `${options.namespace}/cacerts`,
    });
    return found;
  };

  let ca: CertificateAuthority | undefined;
  const servedRootsPem = () => (ca?.rootsPem() ?? "") + (externalRootPem || caCertPem);
  // Roots trusted for client certificates on the secure port.
  const clientRootsPem = () => servedRootsPem() + (federation?.rootsPem() ?? "");
  const issueServingCert: ServingCertIssuer | undefined = plan.orchSigned
    ? (dnsNames: readonly string[]) =>
      orchServingCertIssuer(
        orch!.csrSigner({ signerName: ORCH_SERVING_SIGNER, rootsPem: orchCaPem, log }),
        orchCaPem,
        SECURE_PORT_CERT_TTL_MS,
      )(dnsNames)
    : plan.enabled
    ? async (dnsNames: readonly string[]) => {
      const issued = await ca!.servingCertificate(dnsNames, SECURE_PORT_CERT_TTL_MS);
      return { cert: issued.certChainPem, key: issued.keyPem, caPem: issued.caPem };
    }
    : undefined;

  return {
    ...(federation ? { federation } : {}),
    ...(issueServingCert ? { issueServingCert } : {}),
    ca: () => ca,
    servedRootsPem,
    components: () => [
      ...(federation
        ? [{ name: "federation", start: () => federation.start(), stop: () => federation.stop() }]
        : []),
      ...(caSettings
        ? [{
          name: "ca",
          start: async () => {
            const plugged = await remoteCaCerts();
            ca = await CertificateAuthority.create({ ...caSettings, trustDomain: trustDomain() }, {
              ...(plugged && { plugged }),
              log: logs.scope("serverca"),
              metrics: w.metrics,
              ...(federation && { federation }),
              ...(externalCa && orch && {
                externalSigner: orch.csrSigner({
                  signerName: externalCa.signerName,
                  rootsPem: externalRootPem,
                  log: logs.scope("serverca"),
                }),
              }),
              ...(orch && orchModule && { reviewToken: orchModule.orchTokenReviewer(orch.client) }),
            });
            ca.startRotation();
          },
          stop: () => ca?.close(),
        }]
        : []),
    ],
    securePort: (xds) =>
      caSettings
        ? [secureXdsPort({
          env,
          tlsCertFile: options.tlsCertFile,
          tlsKeyFile: options.tlsKeyFile,
          servingNames: plan.securePortNames,
          ca: () => ca!,
          issue: issueServingCert!,
          clientRootsPem,
          ...(federation ? { federation } : {}),
          trustDomains: () => [trustDomain(), ...w.mesh.current().trustDomainAliases],
          xds,
          addr: options.secureGrpcAddr,
          log: logs.scope("serverca"),
        })]
        : [],
    webhookRootsPem: (selfSignedPem) =>
      options.tlsCertFile ? caCertPem : plan.orchSigned ? orchCaPem : ca?.rootsPem() ?? selfSignedPem() ?? "",
    configMapRoots: () =>
      caSettings && !plan.orchSigned
        ? {
          caRootsPem: () => ca?.rootsPem() ?? "",
          onRootsChanged: (l: () => void) => ca!.onRootsChanged(l),
        }
        : undefined,
  };
}
