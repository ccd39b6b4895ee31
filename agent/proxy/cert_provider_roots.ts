/**
 * `DISCOVERY_CERT_PROVIDER` as the agent reads it: who signed the discovery server's certificate, and so which
 * roots the agent trusts when it dials the discovery server for xDS and for certificates (the reference's
 * `FindRootCAForXDS` and `FindRootCAForCA`). `meshd` (the default): the mesh CA's roots, mounted from the root
 * certificate ConfigMap; `orchestrator` (the reference's `kubernetes`): the orchestrator's CA, mounted with the
 * service account; `custom`: roots mounted at `./etc/certs/root-cert.pem`. `CA_ROOT_CA` and `XDS_ROOT_CA` win.
 *
 * @module
 */
import type { EnvSettings } from "@mesh/shared/env/env_settings";

/** Where the orchestrator mounts its CA beside the service account token (relative, as the reference). */
export const ORCHESTRATOR_CA_PATH = "./var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
/** Where roots are mounted for a `custom` provider. */
export const CUSTOM_ROOT_PATH = "./etc/certs/root-cert.pem";

/** The roots a provider implies; undefined for the mesh CA (`meshd`, Istio's `istiod`, or any other value). */
export function providerRootPath(provider: string): string | undefined {
  switch (provider) {
    case "orchestrator":
    case "kubernetes":
      return ORCHESTRATOR_CA_PATH;
    case "custom":
      return CUSTOM_ROOT_PATH;
    default:
      return undefined;
  }
}

/** The settings the root choice reads. */
export interface RootSettings {
  /** `DISCOVERY_CERT_PROVIDER`. */
  readonly provider: string;
  /** `CA_ROOT_CA`; empty when unset. */
  readonly caRootCa: string;
  /** `XDS_ROOT_CA`; empty when unset. */
  readonly xdsRootCa: string;
}

/** The root settings of the agent's environment. */
export function rootSettings(env: EnvSettings): RootSettings {
  return {
    provider: env.string("DISCOVERY_CERT_PROVIDER"),
    caRootCa: env.string("CA_ROOT_CA"),
    xdsRootCa: env.string("XDS_ROOT_CA"),
  };
}

/** The roots file for the CA connection: `CA_ROOT_CA`, else the provider's, else `meshRoot`. */
export function caRootPath(settings: RootSettings, meshRoot: string): string {
  return settings.caRootCa || providerRootPath(settings.provider) || meshRoot;
}

/**
 * The roots file for the discovery server's xDS: `XDS_ROOT_CA`, else the provider's; undefined when neither
 * names one (the connection then trusts what the CA connection trusts).
 */
export function xdsRootPath(settings: RootSettings): string | undefined {
  return settings.xdsRootCa || providerRootPath(settings.provider);
}
