/** Where a JWKS URI points: what the proxy needs to build a cluster for fetching the keys. */
export interface JwksUriInfo {
  /** The URI's scheme, lower-cased. */
  readonly scheme: "http" | "https";
  /** Host name or IP (IPv6 without brackets), lower-cased. */
  readonly hostname: string;
  /** The explicit port, else 80 for http and 443 for https. */
  readonly port: number;
  /** True for `https`: the fetch cluster needs TLS. */
  readonly useTls: boolean;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s;
const PORT_DIGITS = /^[0-9]+$/;
const MAX_PORT = 65535;

/**
 * Parses a JWKS URI: an absolute `http` or `https` URL (scheme case-insensitive, as Istio's parser) with a
 * host and, when given, a port between 1 and 65535. Returns the parts, or a message saying what is wrong.
 */
export function parseJwksUri(uri: string): JwksUriInfo | { problem: string } {
  const m = SCHEME.exec(uri);
  if (m === null) return { problem: `must be an absolute http or https URL, got "${uri}"` };
  const scheme = m[1].toLowerCase();
  if (scheme !== "http" && scheme !== "https") {
    return { problem: `URI scheme "${m[1]}" is not supported; use http or https` };
  }
  const rest = m[2];
  if (!rest.startsWith("//")) return { problem: `must have a host, got "${uri}"` };
  const authority = rest.slice(2).split(/[/?#]/, 1)[0];
  const hostPort = authority.slice(authority.lastIndexOf("@") + 1);
  let hostname: string;
  let portText: string | undefined;
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    if (close < 0) return { problem: `has an unterminated IPv6 host, got "${uri}"` };
    hostname = hostPort.slice(1, close);
    const after = hostPort.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) {
      return { problem: `has junk after the IPv6 host, got "${uri}"` };
    }
    portText = after === "" ? undefined : after.slice(1);
  } else {
    const colon = hostPort.lastIndexOf(":");
    hostname = colon < 0 ? hostPort : hostPort.slice(0, colon);
    portText = colon < 0 ? undefined : hostPort.slice(colon + 1);
  }
  if (hostname === "") return { problem: `must have a host, got "${uri}"` };
  const defaultPort = scheme === "https" ? 443 : 80;
  let port = defaultPort;
  if (portText !== undefined && portText !== "") {
    if (!PORT_DIGITS.test(portText) || Number(portText) < 1 || Number(portText) > MAX_PORT) {
      return { problem: `port must be a number between 1 and ${MAX_PORT}, got "${portText}" in "${uri}"` };
    }
    port = Number(portText);
  }
  try {
    new URL(uri);
  } catch {
    return { problem: `is not a valid URL, got "${uri}"` };
  }
  return { scheme, hostname: hostname.toLowerCase(), port, useTls: scheme === "https" };
}
