import type { EnvSettings } from "@mesh/shared/env/env_settings";
import { closingComponent, type Component } from "@mesh/shared/lifecycle";
import type { Logger } from "@mesh/shared/log/logger";
import type { CertificateAuthority, FederatedBundles } from "./ca/mod.ts";
import { xdsCallerCheck } from "./ca/mod.ts";
import type { PushContext } from "./push/push_context.ts";
import { followServingTlsFiles, loadServingTls } from "./webhook/mod.ts";
import { startXdsServer, type XdsServerOptions } from "./xds/mod.ts";

/** What the secure xDS port (15012) is built from; getters read what earlier components built. */
export interface SecureXdsPortOptions {
  readonly env: EnvSettings;
  /** `--tlsCertFile`/`--tlsKeyFile`: the serving certificate when given, else the CA issues one. */
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  /** Names the issued serving certificate carries. */
  readonly servingNames: readonly string[];
  /** The started CA (its root rotation already running). */
  readonly ca: () => CertificateAuthority;
  /** Issues the serving certificate from the CA. */
  readonly issue: (dnsNames: readonly string[]) => Promise<{ cert: string; key: string; caPem: string }>;
  /** Roots trusted for client certificates: the CA's, `--caCertFile`'s and the federated ones. */
  readonly clientRootsPem: () => string;
  readonly federation?: FederatedBundles;
  /** The trust domain and its aliases, read once the mesh config is loaded. */
  readonly trustDomains: () => string[];
  /** The plain port's server options but for the address; the same service and admission budget. */
  readonly xds: () => Omit<
    XdsServerOptions<PushContext>,
    "addr" | "flag" | "tls" | "services" | "authenticate"
  >;
  /** `--secureGRPCAddr`. */
  readonly addr: XdsServerOptions<PushContext>["addr"];
  readonly log: Logger;
}

/**
 * The secure port serving ADS and the CA over TLS, with a certificate the CA issued; after a root rotation new
 * connections trust both roots, and an issued serving certificate is re-issued by the new signer so that
 * workloads which know only the new root can verify the server.
 */
export function secureXdsPort(o: SecureXdsPortOptions): Component {
  return closingComponent("secure grpc", async () => {
    const ca = o.ca();
    let serving = await loadServingTls({
      tlsCertFile: o.tlsCertFile,
      tlsKeyFile: o.tlsKeyFile,
      servingNames: o.servingNames,
      issue: o.issue,
      log: o.log,
    });
    const secure = await startXdsServer({
      ...o.xds(),
      addr: o.addr,
      flag: "--secureGRPCAddr",
      tls: { keyPem: serving.key, certChainPem: serving.cert, caPem: o.clientRootsPem() },
      services: ca.services(),
      ...(o.env.bool("XDS_AUTH")
        ? {
          authenticate: xdsCallerCheck({
            authenticators: ca.authenticators,
            identityCheck: o.env.bool("DISCOVERY_ENABLE_XDS_IDENTITY_CHECK"),
            trustDomains: o.trustDomains(),
            federatedTrustDomains: () => o.federation?.trustDomains() ?? [],
            skipTrustDomain: o.env.bool("DISCOVERY_SKIP_VALIDATE_TRUST_DOMAIN"),
          }),
        }
        : {}),
    });
    const retrust = (pair = serving) =>
      secure.updateTls({ keyPem: pair.key, certChainPem: pair.cert, caPem: o.clientRootsPem() });
    ca.onRootsChanged(async () => {
      if (!o.tlsCertFile) serving = { ...await o.issue(o.servingNames), source: "mesh CA" };
      retrust();
    });
    o.federation?.onChange(() => retrust());
    // Certificate files are followed, as the reference follows them: a renewal reaches new connections.
    const files = serving.source === "files"
      ? followServingTlsFiles(
        { tlsCertFile: o.tlsCertFile, tlsKeyFile: o.tlsKeyFile, current: serving, log: o.log },
        (next) => {
          retrust(next);
          serving = next;
        },
      )
      : undefined;
    return [() => files?.close(), () => secure.close()];
  });
}
