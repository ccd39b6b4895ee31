/**
 * The application probes the status port runs for the orchestrator (`MESH_ORCH_APP_PROBERS`): the injector
 * points the pod's liveness, readiness and startup probes at `/app-health/<container>/<kind>` on the status
 * port and hands the original probes to the agent in this variable. It is parsed and checked once at startup
 * into frozen options, so a bad probe stops the agent instead of failing every probe later.
 *
 * @module
 */
import { invalidSetting, onlySettingFields, parseJsonSetting, settingObject } from "./json_setting.ts";

/** The variable holding the probes, as JSON. */
export const APP_PROBERS_VARIABLE = "MESH_ORCH_APP_PROBERS";

/**
 * The paths a probe may be served on. The container is a DNS label, as the orchestrator requires of container
 * names; the strict shape also makes a path safe to name in an error reply.
 */
export const APP_HEALTH_PATH =
  /^\/app-health\/[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\/(?:livez|readyz|startupz)$/;

/** The timeout of a probe that states none: the orchestrator's default `timeoutSeconds` of 1. */
export const DEFAULT_PROBE_TIMEOUT_MS = 1000;

/** An HTTP GET against the application; its status code is the probe's answer. */
export interface HttpGetProbe {
  /** Discriminates the probe kinds. */
  readonly kind: "httpGet";
  /** Whether to speak TLS; HTTPS does not verify the application's certificate, as the kubelet does not. */
  readonly scheme: "HTTP" | "HTTPS";
  /** The loopback address connected to. */
  readonly host: string;
  /** The application's port. */
  readonly port: number;
  /** The request path, with any query, always starting with `/`. */
  readonly path: string;
  /** Headers sent with the request, in order (a `Host` header replaces the default). */
  readonly headers: readonly (readonly [name: string, value: string])[];
  /** How long the application has to answer with its status line and headers. */
  readonly timeoutMs: number;
}

/** A TCP connection to the application; connecting is success. */
export interface TcpSocketProbe {
  /** Discriminates the probe kinds. */
  readonly kind: "tcpSocket";
  /** The loopback address connected to. */
  readonly host: string;
  /** The application's port. */
  readonly port: number;
  /** How long the connection may take. */
  readonly timeoutMs: number;
}

/** One application probe. */
export type AppProbe = HttpGetProbe | TcpSocketProbe;

/** The probes by the `/app-health/...` path they are served on; frozen, without a prototype. */
export type AppProbes = Readonly<Record<string, AppProbe>>;

/** No probes: what an unset variable means. */
export const NO_APP_PROBES: AppProbes = Object.freeze(Object.create(null));

/** The probe for `path`, or undefined when none is configured there. */
export function appProbeFor(probes: AppProbes, path: string): AppProbe | undefined {
  return Object.hasOwn(probes, path) ? probes[path] : undefined;
}

/**
 * Parses the variable's text (empty means no probes). Throws an error naming the variable, the path and field,
 * what is expected and what was found, for the first problem.
 */
export function parseAppProbes(text: string): AppProbes {
  if (text.trim() === "") return NO_APP_PROBES;
  const expected = "an object mapping /app-health/<container>/<livez|readyz|startupz> to a probe";
  const json = parseJsonSetting(APP_PROBERS_VARIABLE, text, expected);
  const top = settingObject(json, APP_PROBERS_VARIABLE, expected);
  const probes: Record<string, AppProbe> = Object.create(null);
  for (const [path, value] of Object.entries(top)) {
    const where = `${APP_PROBERS_VARIABLE}[${JSON.stringify(path)}]`;
    if (!APP_HEALTH_PATH.test(path)) {
      throw new Error(
        `${where} is not a probe path: expected /app-health/<container>/<livez|readyz|startupz> with the ` +
          `container's name (lowercase letters, digits and "-")`,
      );
    }
    probes[path] = Object.freeze(parseProbe(value, where));
  }
  return Object.freeze(probes);
}

function parseProbe(value: unknown, where: string): AppProbe {
  const probe = settingObject(value, where, "a probe object with httpGet or tcpSocket");
  if ("grpc" in probe) {
    throw new Error(`${where}.grpc is not supported: the agent runs httpGet and tcpSocket probes only`);
  }
  onlySettingFields(probe, ["httpGet", "tcpSocket", "timeoutSeconds"], where);
  const kinds = ["httpGet", "tcpSocket"].filter((k) => probe[k] !== undefined);
  if (kinds.length !== 1) {
    const has = kinds.length === 0 ? "no probe" : "two probes";
    throw new Error(`${where} has ${has}: expected exactly one of httpGet or tcpSocket`);
  }
  const timeoutMs = timeout(probe.timeoutSeconds, `${where}.timeoutSeconds`);
  if (probe.httpGet !== undefined) {
    const at = `${where}.httpGet`;
    const http = settingObject(
      probe.httpGet,
      at,
      "an object with port and optional path, scheme, host, httpHeaders",
    );
    onlySettingFields(http, ["path", "port", "scheme", "host", "httpHeaders"], at);
    return {
      kind: "httpGet",
      scheme: scheme(http.scheme, `${at}.scheme`),
      host: loopbackHost(http.host, `${at}.host`),
      port: port(http.port, `${at}.port`),
      path: requestPath(http.path, `${at}.path`),
      headers: Object.freeze(headers(http.httpHeaders, `${at}.httpHeaders`)),
      timeoutMs,
    };
  }
  const at = `${where}.tcpSocket`;
  const tcp = settingObject(probe.tcpSocket, at, "an object with port and optional host");
  onlySettingFields(tcp, ["port", "host"], at);
  return {
    kind: "tcpSocket",
    host: loopbackHost(tcp.host, `${at}.host`),
    port: port(tcp.port, `${at}.port`),
    timeoutMs,
  };
}

function port(value: unknown, where: string): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535) return value;
  const named = typeof value === "string"
    ? " (a named port must be resolved to its number by the injector)"
    : "";
  throw invalidSetting(where, `an integer port from 1 to 65535${named}`, value);
}

function timeout(value: unknown, where: string): number {
  if (value === undefined) return DEFAULT_PROBE_TIMEOUT_MS;
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 3600) {
    return value * 1000;
  }
  throw invalidSetting(where, "an integer number of seconds from 1 to 3600", value);
}

function scheme(value: unknown, where: string): "HTTP" | "HTTPS" {
  if (value === undefined) return "HTTP";
  if (value === "HTTP" || value === "HTTPS") return value;
  throw invalidSetting(where, '"HTTP" or "HTTPS"', value);
}

// The agent probes the application in its own pod only: another host would make the status port, which anyone
// reaching the pod can call, a relay to any address the pod can reach.
function loopbackHost(value: unknown, where: string): string {
  if (value === undefined || value === "" || value === "localhost") return "127.0.0.1";
  if (typeof value === "string" && /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(value)) return value;
  if (value === "::1" || value === "[::1]") return "::1";
  throw invalidSetting(where, 'a loopback address ("localhost", 127.0.0.1 or ::1) or nothing', value);
}

function requestPath(value: unknown, where: string): string {
  if (value === undefined || value === "") return "/";
  // Printable ASCII without spaces: the request line cannot carry anything else unescaped.
  if (typeof value !== "string" || value.length > 2048 || !/^[\x21-\x7e]+$/.test(value)) {
    throw invalidSetting(
      where,
      "a URL path of printable ASCII without spaces, at most 2048 characters",
      value,
    );
  }
  return value.startsWith("/") ? value : `/${value}`;
}

function headers(value: unknown, where: string): Array<readonly [string, string]> {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidSetting(where, "a list of {name, value} objects", value);
  return value.map((item, i) => {
    const at = `${where}[${i}]`;
    const header = settingObject(item, at, "a {name, value} object");
    onlySettingFields(header, ["name", "value"], at);
    if (typeof header.name !== "string" || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header.name)) {
      throw invalidSetting(`${at}.name`, "an HTTP header name", header.name);
    }
    if (typeof header.value !== "string" || !/^[\t\x20-\x7e\x80-\xff]*$/.test(header.value)) {
      throw invalidSetting(`${at}.value`, "a header value without control characters", header.value);
    }
    return Object.freeze([header.name, header.value] as const);
  });
}
