/**
 * The parts of the proxy's bootstrap that send telemetry somewhere, as the reference's bootstrap template
 * writes them from the ProxyConfig: the tracer (`tracing.zipkin`, `lightstep`, `datadog`) with the cluster that
 * reaches its collector, the `envoy_accesslog_service` cluster the generated gRPC access logs stream to
 * (`envoyAccessLogService.address`), and the outlier-detection event log (`--outlierLogPath`). Two tracers are
 * left out and named by {@link unsupportedTracer}: Stackdriver needs the platform's project id, which only a
 * cloud metadata server gives, and the OpenCensus tracer's configuration imports OpenCensus's own protos, which
 * the Envoy schema shipped here lacks, so a bootstrap holding it could not be checked before it is written.
 *
 * @module
 */
import { splitHostPort } from "@mesh/shared/net/host_port";
import type { Json } from "./bootstrap.ts";

/** What the telemetry parts are built from. */
export interface BootstrapTelemetryInputs {
  /** The ProxyConfig's `tracing`, as written. */
  readonly tracing?: Readonly<Record<string, unknown>>;
  /** The ProxyConfig's `envoyAccessLogService.address`, `host:port`; absent: no service. */
  readonly accessLogServiceAddress?: string;
  /** `--outlierLogPath`; empty: none. */
  readonly outlierLogPath: string;
  /** `--serviceCluster`: the service name Datadog reports. */
  readonly serviceCluster: string;
  /** Where the agent wrote `tracing.lightstep.accessToken` for the proxy to read. */
  readonly lightstepTokenFile: string;
}

/** The bootstrap fields to add: static clusters, and top-level `tracing` and `cluster_manager` when set. */
export interface BootstrapTelemetry {
  readonly clusters: readonly Json[];
  readonly fields: Json;
}

const TRACE_TYPE = "type.googleapis.com/envoy.config.trace.v3.";

/** Builds the telemetry parts of the bootstrap. */
export function bootstrapTelemetry(inputs: BootstrapTelemetryInputs): BootstrapTelemetry {
  const clusters: Json[] = [];
  const fields: Json = {};
  const tracer = tracerOf(inputs);
  if (tracer !== undefined) {
    if (tracer.cluster) clusters.push(dnsCluster(tracer.cluster.name, tracer.cluster.address));
    fields.tracing = { http: tracer.http };
  }
  if (inputs.accessLogServiceAddress) {
    clusters.push({
      ...dnsCluster("envoy_accesslog_service", inputs.accessLogServiceAddress),
      http2_protocol_options: {},
    });
  }
  if (inputs.outlierLogPath !== "") {
    fields.cluster_manager = { outlier_detection: { event_log_path: inputs.outlierLogPath } };
  }
  return { clusters, fields };
}

/** The tracer the ProxyConfig names that this bootstrap cannot configure, or undefined. */
export function unsupportedTracer(
  tracing: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  const name = tracing === undefined ? undefined : firstTracer(tracing);
  return name === "stackdriver" || name === "openCensusAgent" ? name : undefined;
}

interface Tracer {
  readonly http: Json;
  readonly cluster?: { readonly name: string; readonly address: string };
}

const TRACERS = ["zipkin", "lightstep", "datadog", "openCensusAgent", "stackdriver"] as const;

/** The reference's template takes the first tracer set, in this order. */
function firstTracer(tracing: Readonly<Record<string, unknown>>): string | undefined {
  return TRACERS.find((name) => typeof tracing[name] === "object" && tracing[name] !== null);
}

function tracerOf(inputs: BootstrapTelemetryInputs): Tracer | undefined {
  const { tracing, serviceCluster } = inputs;
  if (tracing === undefined) return undefined;
  const name = firstTracer(tracing);
  const settings = (name === undefined ? {} : tracing[name]) as Record<string, unknown>;
  const address = typeof settings.address === "string" ? settings.address : "";
  switch (name) {
    case "zipkin":
      if (address === "") return undefined;
      return {
        http: {
          name: "envoy.tracers.zipkin",
          typed_config: {
            "@type": `${TRACE_TYPE}ZipkinConfig`,
            collector_cluster: "zipkin",
            collector_endpoint: "/api/v2/spans",
            collector_endpoint_version: "HTTP_JSON",
            trace_id_128bit: true,
            shared_span_context: false,
          },
        },
        cluster: { name: "zipkin", address },
      };
    case "lightstep":
      if (address === "") return undefined;
      return {
        http: {
          name: "envoy.tracers.lightstep",
          typed_config: {
            "@type": `${TRACE_TYPE}LightstepConfig`,
            collector_cluster: "lightstep",
            access_token_file: inputs.lightstepTokenFile,
          },
        },
        cluster: { name: "lightstep", address },
      };
    case "datadog":
      if (address === "") return undefined;
      return {
        http: {
          name: "envoy.tracers.datadog",
          typed_config: {
            "@type": `${TRACE_TYPE}DatadogConfig`,
            collector_cluster: "datadog_agent",
            service_name: serviceCluster,
          },
        },
        cluster: { name: "datadog_agent", address },
      };
    default:
      return undefined;
  }
}

/** A cluster that resolves `host:port` by DNS, as the template's tracer and access log clusters do. */
function dnsCluster(name: string, address: string): Json {
  const { host, port } = splitHostPort(address);
  if (host === "" || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RangeError(`The ${name} address "${address}" has no port: expected "host:port"`);
  }
  return {
    name,
    type: "STRICT_DNS",
    respect_dns_ttl: true,
    dns_refresh_rate: "30s",
    connect_timeout: "1s",
    lb_policy: "ROUND_ROBIN",
    load_assignment: {
      cluster_name: name,
      endpoints: [{
        lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }],
      }],
    },
  };
}
