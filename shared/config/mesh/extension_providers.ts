import { childPath, type ValidationReport } from "../validation/report.ts";
import { checkWildcardDomain } from "../validation/hosts.ts";
import { isLowercaseDnsLabel } from "../validation/labels.ts";
import { checkPort } from "../validation/ports.ts";
import { MILLISECOND } from "../validation/durations.ts";
import { bool, type Decoder, duration, list, mapOf, message, str, uint32 } from "./decoders.ts";

/** Where an extension provider's service runs: `[namespace/]hostname` and port. */
export interface ProviderService {
  /** The service, as `[namespace/]hostname`; a namespace of `*` or none matches any. */
  readonly service?: string;
  /** The service's port. */
  readonly port?: number;
}

/** The request body sent along to an external authorizer. */
export interface AuthzRequestBody {
  /** Most body bytes buffered and sent; larger requests fail unless `allowPartialMessage`. */
  readonly maxRequestBytes?: number;
  /** Send the first `maxRequestBytes` of a larger body instead of failing the request. */
  readonly allowPartialMessage?: boolean;
  /** Send the body as raw bytes rather than as a UTF-8 string (gRPC API only). */
  readonly packAsBytes?: boolean;
}

/** An external authorizer speaking Envoy's ext_authz HTTP API. */
export interface ExtAuthzHttpProvider extends ProviderService {
  /** How long to wait for the authorizer, in nanoseconds; whole milliseconds, at least 1 ms. */
  readonly timeout?: bigint;
  /** Prefix prepended to the request path sent to the authorizer; starts with `/`. */
  readonly pathPrefix?: string;
  /** Allow the request when the authorizer cannot be reached or fails. */
  readonly failOpen?: boolean;
  /** HTTP status (a three-digit string) returned when the authorizer fails and `failOpen` is false. */
  readonly statusOnError?: string;
  /** Request headers sent to the authorizer (Istio's older name of `includeRequestHeadersInCheck`). */
  readonly includeHeadersInCheck?: readonly string[];
  /** Request headers sent to the authorizer. */
  readonly includeRequestHeadersInCheck?: readonly string[];
  /** Extra headers, name to value, added to the check request. */
  readonly includeAdditionalHeadersInCheck?: Readonly<Record<string, string>>;
  /** Whether and how much of the request body is sent to the authorizer. */
  readonly includeRequestBodyInCheck?: AuthzRequestBody;
  /** Authorizer response headers copied to the upstream request when it allows. */
  readonly headersToUpstreamOnAllow?: readonly string[];
  /** Authorizer response headers copied to the downstream response when it denies. */
  readonly headersToDownstreamOnDeny?: readonly string[];
}

/** An external authorizer speaking Envoy's ext_authz gRPC API. */
export interface ExtAuthzGrpcProvider extends ProviderService {
  /** How long to wait for the authorizer, in nanoseconds; whole milliseconds, at least 1 ms. */
  readonly timeout?: bigint;
  /** Allow the request when the authorizer cannot be reached or fails. */
  readonly failOpen?: boolean;
  /** HTTP status (a three-digit string) returned when the authorizer fails and `failOpen` is false. */
  readonly statusOnError?: string;
  /** Whether and how much of the request body is sent to the authorizer. */
  readonly includeRequestBodyInCheck?: AuthzRequestBody;
}

/** A tracing backend reached at a service and port. */
export interface TracingProvider extends ProviderService {
  /** Longest tag value kept in a span, in characters. */
  readonly maxTagLength?: number;
}

/** A tracing backend that also needs an access token. */
export interface TokenTracingProvider extends TracingProvider {
  /** Access token the tracer authenticates with. */
  readonly accessToken?: string;
}

/** An access log service (HTTP or TCP). */
export interface AccessLogServiceProvider extends ProviderService {
  /** Log name the access log service receives entries under. */
  readonly logName?: string;
  /** Filter state object keys added to each entry. */
  readonly filterStateObjectsToLog?: readonly string[];
  /** Request headers added to each entry. */
  readonly additionalRequestHeadersToLog?: readonly string[];
  /** Response headers added to each entry. */
  readonly additionalResponseHeadersToLog?: readonly string[];
  /** Response trailers added to each entry. */
  readonly additionalResponseTrailersToLog?: readonly string[];
}

/** A named extension (authorizer, tracer, metrics or access log sink) that policies refer to by name. */
export interface ExtensionProvider {
  /** Name policies refer to the provider by; should be unique and non-empty (a warning otherwise). */
  readonly name: string;
  /** External authorizer over HTTP. */
  readonly envoyExtAuthzHttp?: ExtAuthzHttpProvider;
  /** External authorizer over gRPC. */
  readonly envoyExtAuthzGrpc?: ExtAuthzGrpcProvider;
  /** Zipkin tracer. */
  readonly zipkin?: TracingProvider;
  /** Lightstep tracer. */
  readonly lightstep?: TokenTracingProvider;
  /** Datadog tracer. */
  readonly datadog?: TracingProvider;
  /** Stackdriver tracer, with its debug switch and per-span limits. */
  readonly stackdriver?: {
    readonly debug?: boolean;
    readonly maxNumberOfAttributes?: number;
    readonly maxNumberOfAnnotations?: number;
    readonly maxNumberOfMessageEvents?: number;
    readonly maxTagLength?: number;
  };
  /** OpenCensus agent tracer and the trace header formats it propagates. */
  readonly opencensus?: TracingProvider & { readonly context?: readonly string[] };
  /** SkyWalking tracer. */
  readonly skywalking?: TokenTracingProvider;
  /** Prometheus metrics; has no settings. */
  readonly prometheus?: { readonly [key: string]: never };
  /** Access log written to a file, as text or as JSON with the given labels. */
  readonly envoyFileAccessLog?: {
    readonly path?: string;
    readonly logFormat?: { readonly text?: string; readonly labels?: Readonly<Record<string, unknown>> };
  };
  /** HTTP access log service (gRPC ALS). */
  readonly envoyHttpAls?: AccessLogServiceProvider;
  /** TCP access log service (gRPC ALS). */
  readonly envoyTcpAls?: AccessLogServiceProvider;
}

const PROVIDERS = [
  "envoyExtAuthzHttp",
  "envoyExtAuthzGrpc",
  "zipkin",
  "lightstep",
  "datadog",
  "stackdriver",
  "opencensus",
  "skywalking",
  "prometheus",
  "envoyFileAccessLog",
  "envoyHttpAls",
  "envoyTcpAls",
] as const;

const timeout = duration({ min: MILLISECOND, precision: MILLISECOND });
const requestBody = message<AuthzRequestBody>({
  maxRequestBytes: uint32,
  allowPartialMessage: bool,
  packAsBytes: bool,
});
const tracerFields = { service: str, port: uint32, maxTagLength: uint32 };
const tracer = message<TracingProvider>(tracerFields);
const tokenTracer = message<TokenTracingProvider>({ ...tracerFields, accessToken: str });
const accessLogService = message<AccessLogServiceProvider>({
  service: str,
  port: uint32,
  logName: str,
  filterStateObjectsToLog: list(str),
  additionalRequestHeadersToLog: list(str),
  additionalResponseHeadersToLog: list(str),
  additionalResponseTrailersToLog: list(str),
});

const provider = message<ExtensionProvider>({
  name: str,
  envoyExtAuthzHttp: message<ExtAuthzHttpProvider>({
    service: str,
    port: uint32,
    timeout,
    pathPrefix: str,
    failOpen: bool,
    statusOnError: str,
    includeHeadersInCheck: list(str),
    includeRequestHeadersInCheck: list(str),
    includeAdditionalHeadersInCheck: mapOf(str),
    includeRequestBodyInCheck: requestBody,
    headersToUpstreamOnAllow: list(str),
    headersToDownstreamOnDeny: list(str),
  }),
  envoyExtAuthzGrpc: message<ExtAuthzGrpcProvider>({
    service: str,
    port: uint32,
    timeout,
    failOpen: bool,
    statusOnError: str,
    includeRequestBodyInCheck: requestBody,
  }),
  zipkin: tracer,
  lightstep: tokenTracer,
  datadog: tracer,
  stackdriver: message<NonNullable<ExtensionProvider["stackdriver"]>>({
    debug: bool,
    maxNumberOfAttributes: uint32,
    maxNumberOfAnnotations: uint32,
    maxNumberOfMessageEvents: uint32,
    maxTagLength: uint32,
  }),
  opencensus: message<NonNullable<ExtensionProvider["opencensus"]>>({
    ...tracerFields,
    context: list(str),
  }),
  skywalking: tokenTracer,
  prometheus: message<Record<never, never>>({}) as Decoder<{ readonly [key: string]: never }>,
  envoyFileAccessLog: message<NonNullable<ExtensionProvider["envoyFileAccessLog"]>>({
    path: str,
    logFormat: message<NonNullable<NonNullable<ExtensionProvider["envoyFileAccessLog"]>["logFormat"]>>({
      text: str,
      labels: (report, path, value) => mapOf<unknown>((_r, _p, v) => v)(report, path, value),
    }, { oneofs: [["text", "labels"]] }),
  }),
  envoyHttpAls: accessLogService,
  envoyTcpAls: accessLogService,
}, { oneofs: [PROVIDERS] }) as Decoder<ExtensionProvider>;

/**
 * The `extensionProviders` list. Field names and types are errors; what Istio only warns about (names,
 * services, ports, status codes of providers that may never be used) is recorded as warnings.
 */
export const extensionProviders: Decoder<ExtensionProvider[]> = (
  report,
  path,
  value,
): ExtensionProvider[] | undefined => {
  const providers = list(provider)(report, path, value);
  if (providers === undefined) return undefined;
  const names = new Set<string>();
  for (const [i, p] of providers.entries()) {
    const at = childPath(path, i);
    if (!p.name) report.warn(childPath(at, "name"), "extension provider name must not be empty");
    else if (names.has(p.name)) {
      report.warn(childPath(at, "name"), `duplicate extension provider name "${p.name}"`);
    }
    names.add(p.name ?? "");
    const kind = PROVIDERS.find((k) => p[k] !== undefined);
    if (kind === undefined) {
      report.warn(
        at,
        `extension provider "${p.name ?? ""}" sets no provider; expected one of ${PROVIDERS.join(", ")}`,
      );
      continue;
    }
    const settings = p[kind] as ProviderService & { statusOnError?: string; pathPrefix?: string };
    if ("service" in settings || kind.startsWith("envoyExtAuthz")) {
      checkProviderService(report, childPath(at, kind), settings);
    }
    if (settings.statusOnError !== undefined && !/^[1-5][0-9][0-9]$/.test(settings.statusOnError)) {
      report.warn(
        childPath(childPath(at, kind), "statusOnError"),
        `invalid HTTP status "${settings.statusOnError}"`,
      );
    }
    if (
      settings.pathPrefix !== undefined && settings.pathPrefix !== "" && !settings.pathPrefix.startsWith("/")
    ) {
      report.warn(
        childPath(childPath(at, kind), "pathPrefix"),
        `pathPrefix must begin with "/", got "${settings.pathPrefix}"`,
      );
    }
  }
  return providers;
};

function checkProviderService(report: ValidationReport, path: string, settings: ProviderService): void {
  const service = settings.service ?? "";
  const at = childPath(path, "service");
  if (service === "") report.warn(at, "service must not be empty");
  else {
    const slash = service.indexOf("/");
    const namespace = slash >= 0 ? service.slice(0, slash) : undefined;
    const host = slash >= 0 ? service.slice(slash + 1) : service;
    if (namespace !== undefined && namespace !== "*" && !isLowercaseDnsLabel(namespace)) {
      report.warn(at, `invalid namespace "${namespace}" in service "${service}"`);
    }
    const problem = checkWildcardDomain(host);
    if (problem) report.warn(at, `invalid service "${service}": ${problem}`);
  }
  const problem = checkPort(settings.port ?? 0);
  if (problem) report.warn(childPath(path, "port"), problem);
}
