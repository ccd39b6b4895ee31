import { x509 } from "./_x509.ts";
import type { X509Certificate } from "./certificate_pem.ts";

/** The subject alternative names of a certificate or request, by type. */
export interface SubjectAltNames {
  /** DNS host names; encoded lower-cased. */
  readonly dnsNames: readonly string[];
  /** IPv4 or IPv6 addresses, as text. */
  readonly ipAddresses: readonly string[];
  /** Absolute URIs, such as SPIFFE ids. */
  readonly uris: readonly string[];
}

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** True when `text` is an IPv4 or IPv6 address literal (no brackets, no zone). */
export function isIpAddress(text: string): boolean {
  if (IPV4.test(text)) return true;
  if (!text.includes(":") || /[^0-9a-f:.]/i.test(text)) return false;
  try {
    new URL(`http://[${text}]/`);
    return true;
  } catch {
    return false;
  }
}

/** True when `text` is a DNS name a certificate may carry: RFC 1123 labels, optionally under a `*.` wildcard. */
export function isDnsName(text: string): boolean {
  const name = text.startsWith("*.") ? text.slice(2) : text;
  return name.length > 0 && name.length <= 253 && name.split(".").every((label) => DNS_LABEL.test(label));
}

/** Sorts host names into DNS names and IP addresses, so `["svc.ns", "127.0.0.1"]` can become SANs. */
export function splitHostNames(names: readonly string[]): Pick<SubjectAltNames, "dnsNames" | "ipAddresses"> {
  return {
    dnsNames: names.filter((name) => !isIpAddress(name)),
    ipAddresses: names.filter(isIpAddress),
  };
}

/**
 * Checks every name and builds the SubjectAlternativeName extension; `critical` must be true when the subject is
 * empty (RFC 5280 4.2.1.6). Throws RangeError naming the first invalid value; returns undefined when there is none.
 */
export function subjectAltNameExtension(
  names: Partial<SubjectAltNames>,
  critical: boolean,
): x509.SubjectAlternativeNameExtension | undefined {
  const entries: x509.JsonGeneralName[] = [];
  for (const dns of names.dnsNames ?? []) {
    if (!isDnsName(dns)) {
      throw new RangeError(`Invalid DNS name "${dns}": expected a host name such as "svc.ns.svc"`);
    }
    entries.push({ type: "dns", value: dns.toLowerCase() });
  }
  for (const ip of names.ipAddresses ?? []) {
    if (!isIpAddress(ip)) throw new RangeError(`Invalid IP address "${ip}": expected IPv4 or IPv6 literal`);
    entries.push({ type: "ip", value: ip });
  }
  for (const uri of names.uris ?? []) {
    if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(uri)) {
      throw new RangeError(`Invalid URI "${uri}": expected an absolute URI such as "spiffe://td/ns/a/sa/b"`);
    }
    entries.push({ type: "url", value: uri });
  }
  return entries.length === 0 ? undefined : new x509.SubjectAlternativeNameExtension(entries, critical);
}

/** Reads the subject alternative names of a certificate or a CSR (empty lists when it has none). */
export function subjectAltNamesOf(
  certificate: X509Certificate | x509.Pkcs10CertificateRequest,
): SubjectAltNames {
  const extension = certificate.extensions.find((e): e is x509.SubjectAlternativeNameExtension =>
    e instanceof x509.SubjectAlternativeNameExtension
  );
  const items = extension?.names.items ?? [];
  const of = (type: string) => items.filter((item) => item.type === type).map((item) => item.value);
  return { dnsNames: of("dns"), ipAddresses: of("ip"), uris: of("url") };
}
