/**
 * Gateway TLS credentials (`credentialName`) as both programs hold them: a certificate chain and key, and for
 * MUTUAL servers the CA certificates that verify clients. Whatever stores them (an orchestrator Secret, a
 * folder on disk) names its parts with the keys of an orchestrator TLS Secret (`tls.crt`, `tls.key`, `ca.crt`)
 * or the generic ones (`cert`, `key`, `cacert`); SDS names the CA part `<credentialName>-cacert`.
 *
 * @module
 */
import { parseCertificateFactsPem } from "../pki/certificate_facts.ts";

/** A TLS credential a gateway serves or checks peers with, in PEM. */
export interface TlsCredential {
  /** The certificate chain, leaf first. */
  readonly certChainPem: string;
  /** The private key of the leaf. */
  readonly privateKeyPem: string;
  /** CA certificates that verify client certificates (MUTUAL mode); absent when the credential has none. */
  readonly caCertPem?: string;
}

/** The keys (Secret data keys, or file names in a credential folder) of each part, preferred first. */
export const CREDENTIAL_KEYS: {
  readonly certChain: readonly ["tls.crt", "cert"];
  readonly privateKey: readonly ["tls.key", "key"];
  readonly caCert: readonly ["ca.crt", "cacert"];
} = Object.freeze(
  {
    certChain: ["tls.crt", "cert"],
    privateKey: ["tls.key", "key"],
    caCert: ["ca.crt", "cacert"],
  } as const,
);

/** The suffix of the SDS name that asks for a credential's CA certificates only. */
export const CA_CREDENTIAL_SUFFIX = "-cacert";

/** The credential an SDS resource name refers to, and whether only its CA certificates are asked for. */
export function credentialOfSdsName(name: string): { credential: string; caOnly: boolean } {
  return name.endsWith(CA_CREDENTIAL_SUFFIX) && name.length > CA_CREDENTIAL_SUFFIX.length
    ? { credential: name.slice(0, -CA_CREDENTIAL_SUFFIX.length), caOnly: true }
    : { credential: name, caOnly: false };
}

/**
 * The credential held under `read`'s keys, or undefined when it lacks a certificate chain or a key (then it
 * is not a TLS credential, e.g. an unrelated Secret).
 */
export function tlsCredentialOf(read: (key: string) => string | undefined): TlsCredential | undefined {
  const first = (keys: readonly string[]) => {
    for (const key of keys) {
      const value = read(key);
      if (value !== undefined && value !== "") return value;
    }
    return undefined;
  };
  const certChainPem = first(CREDENTIAL_KEYS.certChain);
  const privateKeyPem = first(CREDENTIAL_KEYS.privateKey);
  if (certChainPem === undefined || privateKeyPem === undefined) return undefined;
  const caCertPem = first(CREDENTIAL_KEYS.caCert);
  return { certChainPem, privateKeyPem, ...(caCertPem !== undefined ? { caCertPem } : {}) };
}

/**
 * Checks that a credential's parts are what they claim: certificates that parse, a PEM private key.
 *
 * @throws {SyntaxError} naming `where` and the part that is wrong
 */
export function checkTlsCredential(credential: TlsCredential, where: string): void {
  parseCertificateFactsPem(credential.certChainPem, `${where}: certificate chain`);
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(credential.privateKeyPem)) {
    throw new SyntaxError(`${where}: the private key is not PEM ("-----BEGIN … PRIVATE KEY-----" expected)`);
  }
  if (credential.caCertPem !== undefined) {
    parseCertificateFactsPem(credential.caCertPem, `${where}: CA certificates`);
  }
}

/**
 * The Envoy `Secret` (as JSON) named `name` for `credential`: its certificate and key, or with `caOnly` its
 * CA certificates as a validation context (undefined when it has none).
 */
export function envoyCredentialSecret(
  name: string,
  credential: TlsCredential,
  caOnly: boolean,
): Record<string, unknown> | undefined {
  if (caOnly) {
    return credential.caCertPem !== undefined
      ? { name, validation_context: { trusted_ca: { inline_string: credential.caCertPem } } }
      : undefined;
  }
  return {
    name,
    tls_certificate: {
      certificate_chain: { inline_string: credential.certChainPem },
      private_key: { inline_string: credential.privateKeyPem },
    },
  };
}
