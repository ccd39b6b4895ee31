import { isDnsLabel } from "./labels.ts";

/** Protocols a port may declare, as Istio names them (parsing is case-insensitive). */
export type Protocol =
  | "GRPC"
  | "GRPC-Web"
  | "HTTP"
  | "HTTP_PROXY"
  | "HTTP2"
  | "HTTPS"
  | "TCP"
  | "TLS"
  | "UDP"
  | "Mongo"
  | "Redis"
  | "MySQL"
  | "Thrift";

const PROTOCOLS: readonly Protocol[] = [
  "GRPC",
  "GRPC-Web",
  "HTTP",
  "HTTP_PROXY",
  "HTTP2",
  "HTTPS",
  "TCP",
  "TLS",
  "UDP",
  "Mongo",
  "Redis",
  "MySQL",
  "Thrift",
];

/** The protocol names accepted in `protocol` fields, for error messages. */
export const SUPPORTED_PROTOCOLS =
  "HTTP, HTTPS, HTTP2, GRPC, GRPC-WEB, HTTP_PROXY, TCP, TLS, UDP, MONGO, REDIS, MYSQL, THRIFT";

/**
 * Parses a protocol name case-insensitively; undefined when unsupported, or not a string at all: callers pass
 * fields of documents whose type was reported, not corrected.
 */
export function parseProtocol(name: unknown): Protocol | undefined {
  if (typeof name !== "string") return undefined;
  const lower = name.toLowerCase();
  return PROTOCOLS.find((p) => p.toLowerCase() === lower);
}

/** Reports whether the protocol is HTTP-based (HTTP/1.1, HTTP/2, gRPC, gRPC-Web, HTTP proxy). */
export function isHttpProtocol(p: Protocol | undefined): boolean {
  return p === "HTTP" || p === "HTTP2" || p === "HTTP_PROXY" || p === "GRPC" || p === "GRPC-Web";
}

/** Reports whether the protocol is TLS-based (HTTPS, TLS). */
export function isTlsProtocol(p: Protocol | undefined): boolean {
  return p === "HTTPS" || p === "TLS";
}

/** Checks a protocol name; empty means "detect" and passes. Returns a message when unsupported. */
export function checkProtocol(name: string): string | undefined {
  if (name === "" || parseProtocol(name) !== undefined) return undefined;
  return `unsupported protocol "${name}"; expected one of ${SUPPORTED_PROTOCOLS}`;
}

/** Checks a port number: an integer in 1..65535. Returns a message when out of range. */
export function checkPort(n: number): string | undefined {
  if (Number.isInteger(n) && n >= 1 && n <= 65535) return undefined;
  return `port number ${n} must be in the range 1..65535`;
}

/** Checks a port name: a DNS label (alphanumerics and `-`, at most 63 characters). */
export function checkPortName(name: string): string | undefined {
  return isDnsLabel(name)
    ? undefined
    : `invalid port name "${name}"; expected a DNS label such as "http-web"`;
}
