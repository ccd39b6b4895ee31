import assert from "node:assert/strict";
import { formatPgvViolations, validatePgvAny } from "@mesh/proto/pgv_validate";
import { structToJson } from "@mesh/proto/struct_json";
import { parseProxy } from "../../model/proxy.ts";
import type { PushMeshConfig } from "../../push/push_context.ts";
import { MESH, networking, run, World } from "../_test_world.ts";
import { envoyResources, envoySidecar, ingressGateway } from "./_test_envoy.ts";
import { envoyLdsGenerator } from "./envoy_lds.ts";
import {
  ACCESS_LOG_SERVICE_CLUSTER,
  DEFAULT_JSON_ACCESS_LOG_FORMAT,
  DEFAULT_TEXT_ACCESS_LOG_FORMAT,
  listenerTelemetry,
} from "./telemetry.ts";

type Obj = Record<string, unknown>;

function world(): World {
  return new World().apply(
    ...envoyResources(),
    networking("ServiceEntry", "example", "db", {
      hosts: ["db.example.svc.cluster.local"],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      addresses: ["10.96.0.40"],
      ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
    }),
    networking("Gateway", "example", "shop", {
      selector: { app: "ingress" },
      servers: [
        { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["shop.example.com"] },
        { port: { number: 9000, name: "tcp", protocol: "TCP" }, hosts: ["*"] },
      ],
    }),
    networking("VirtualService", "example", "shop-tcp", {
      hosts: ["*"],
      gateways: ["shop"],
      tcp: [{ match: [{ port: 9000 }], route: [{ destination: { host: "db.example.svc.cluster.local" } }] }],
    }),
  );
}

function listeners(
  mesh: Partial<PushMeshConfig>,
  proxy = envoySidecar("example", "10.0.2.1"),
  sampling?: number,
) {
  const push = world().push({
    mesh: { ...MESH, ...mesh },
    ...(sampling === undefined ? {} : { traceSampling: sampling }),
  });
  const lds = run(envoyLdsGenerator, proxy, push);
  for (const [name, encoded] of lds.bytes) {
    const violations = validatePgvAny(encoded);
    assert.equal(violations.length, 0, `${name}: ${formatPgvViolations(violations)}`);
  }
  return lds.byName;
}

/** Every network filter of a listener with its name, across its chains. */
function filters(listener: Obj, name: string): Obj[] {
  return (listener.filter_chains as Obj[]).flatMap((c) => c.filters as Obj[]).filter((f) => f.name === name)
    .map((f) => f.typed_config as Obj);
}

const HCM = "envoy.filters.network.http_connection_manager";
const TCP = "envoy.filters.network.tcp_proxy";

Deno.test("Without accessLogFile and the access log service, no listener or filter logs", () => {
  for (const listener of listeners({}).values()) {
    assert.equal(listener.access_log, undefined);
    for (const filter of [...filters(listener, HCM), ...filters(listener, TCP)]) {
      assert.equal(filter.access_log, undefined, String(listener.name));
    }
  }
});

Deno.test("accessLogFile puts a text file log with the reference's default format on every connection manager and TCP proxy", () => {
  const byName = listeners({ accessLogFile: "/dev/stdout" });
  const http = filters(
    byName.get("0.0.0.0_8080") ?? [...byName.values()].find((l) => filters(l, HCM).length > 0)!,
    HCM,
  );
  const tcp = filters(byName.get("10.96.0.40_5432")!, TCP);
  for (const filter of [...http, ...tcp]) {
    const [log] = filter.access_log as Obj[];
    assert.equal(log.name, "envoy.access_loggers.file");
    const config = log.typed_config as Obj;
    assert.equal(config.path, "/dev/stdout");
    assert.deepEqual(config.log_format, { text_format: DEFAULT_TEXT_ACCESS_LOG_FORMAT });
  }
  assert.ok(http.length > 0 && tcp.length > 0);
});

Deno.test("Every listener logs the connections no route was found for, unless disableEnvoyListenerLog", () => {
  for (const listener of listeners({ accessLogFile: "/var/log/proxy.log" }).values()) {
    const [log] = listener.access_log as Obj[];
    assert.deepEqual(log.filter, { response_flag_filter: { flags: ["NR"] } }, String(listener.name));
  }
  for (
    const listener of listeners({ accessLogFile: "/var/log/proxy.log", disableEnvoyListenerLog: true })
      .values()
  ) {
    assert.equal(listener.access_log, undefined);
  }
});

Deno.test("accessLogEncoding JSON logs the reference's JSON fields, or the ones accessLogFormat names", () => {
  const defaults = listeners({ accessLogFile: "/dev/stdout", accessLogEncoding: "JSON" });
  const [log] = filters(defaults.get("10.96.0.40_5432")!, TCP)[0].access_log as Obj[];
  const format = ((log.typed_config as Obj).log_format as Obj).json_format;
  assert.deepEqual(structToJson(format as never), DEFAULT_JSON_ACCESS_LOG_FORMAT);

  const own = listeners({
    accessLogFile: "/dev/stdout",
    accessLogEncoding: "JSON",
    accessLogFormat: '{"code":"%RESPONSE_CODE%","peer":"%DOWNSTREAM_REMOTE_ADDRESS%"}',
  });
  const [ownLog] = filters(own.get("10.96.0.40_5432")!, TCP)[0].access_log as Obj[];
  assert.deepEqual(structToJson(((ownLog.typed_config as Obj).log_format as Obj).json_format as never), {
    code: "%RESPONSE_CODE%",
    peer: "%DOWNSTREAM_REMOTE_ADDRESS%",
  });
});

Deno.test("enableEnvoyAccessLogService streams HTTP, TCP and listener logs to the bootstrap's service cluster", () => {
  const byName = listeners({ enableEnvoyAccessLogService: true });
  const tcp = filters(byName.get("10.96.0.40_5432")!, TCP)[0];
  const [tcpLog] = tcp.access_log as Obj[];
  assert.equal(tcpLog.name, "envoy.access_loggers.tcp_grpc");
  const common = (tcpLog.typed_config as Obj).common_config as Obj;
  assert.equal(common.log_name, "tcp_envoy_accesslog");
  assert.deepEqual(common.grpc_service, { envoy_grpc: { cluster_name: ACCESS_LOG_SERVICE_CLUSTER } });
  const hcm = [...byName.values()].flatMap((l) => filters(l, HCM))[0];
  assert.equal((hcm.access_log as Obj[])[0].name, "envoy.access_loggers.http_grpc");
  const [listenerLog] = byName.get("virtualOutbound")!.access_log as Obj[];
  assert.equal(((listenerLog.typed_config as Obj).common_config as Obj).log_name, "listener_envoy_accesslog");
});

Deno.test("Connection managers trace at DISCOVERY_TRACE_SAMPLING with the mesh's own tags while enableTracing is on", () => {
  const hcm = [...listeners({}, undefined, 2.5).values()].flatMap((l) => filters(l, HCM))[0];
  const tracing = hcm.tracing as Obj;
  assert.deepEqual(tracing.random_sampling, { value: 2.5 });
  assert.deepEqual(tracing.client_sampling, { value: 100 });
  assert.deepEqual((tracing.custom_tags as Obj[]).map((t) => t.tag), [
    "mesh.canonical_revision",
    "mesh.canonical_service",
    "mesh.mesh_id",
    "mesh.namespace",
  ]);
  const off = [...listeners({ enableTracing: false }).values()].flatMap((l) => filters(l, HCM));
  assert.ok(off.length > 0 && off.every((f) => f.tracing === undefined));
});

Deno.test("A proxy's own ProxyConfig sampling, custom tags and path length win over the server's", () => {
  const proxy = parseProxy({
    id: "sidecar~10.0.2.1~app.example~example.svc.cluster.local",
    metadata: {
      NAMESPACE: "example",
      INSTANCE_IPS: "10.0.2.1",
      PROXY_CONFIG: {
        tracing: {
          sampling: 42,
          maxPathTagLength: 99,
          customTags: {
            team: { literal: { value: "payments" } },
            user: { header: { name: "x-user", defaultValue: "anonymous" } },
          },
        },
      },
    },
  });
  const tracing = [...listeners({}, proxy, 1).values()].flatMap((l) => filters(l, HCM))[0].tracing as Obj;
  assert.deepEqual(tracing.random_sampling, { value: 42 });
  assert.deepEqual(tracing.max_path_tag_length, { value: 99 });
  const tags = tracing.custom_tags as Obj[];
  assert.deepEqual(tags.find((t) => t.tag === "team"), { tag: "team", literal: { value: "payments" } });
  assert.deepEqual(tags.find((t) => t.tag === "user"), {
    tag: "user",
    request_header: { name: "x-user", default_value: "anonymous" },
  });
});

Deno.test("A gateway's connection managers, TCP proxies and listeners log like a sidecar's", () => {
  const byName = listeners({ accessLogFile: "/dev/stdout" }, ingressGateway());
  const http = filters(byName.get("0.0.0.0_80")!, HCM)[0];
  assert.equal((http.access_log as Obj[])[0].name, "envoy.access_loggers.file");
  assert.ok(http.tracing !== undefined);
  const tcp = filters(byName.get("0.0.0.0_9000")!, TCP)[0];
  assert.equal((tcp.access_log as Obj[])[0].name, "envoy.access_loggers.file");
  assert.ok(byName.get("0.0.0.0_80")!.access_log !== undefined);
});

Deno.test("Proxies whose ProxyConfig tracing reads alike share one listener telemetry object per snapshot", () => {
  const push = world().push({});
  const withTracing = (ip: string, sampling?: number) =>
    parseProxy({
      id: `sidecar~${ip}~app.example~example.svc.cluster.local`,
      metadata: {
        NAMESPACE: "example",
        INSTANCE_IPS: ip,
        PROXY_CONFIG: {
          tracing: { zipkin: { address: `zipkin-${ip}:9411` }, ...(sampling ? { sampling } : {}) },
        },
      },
    });
  const a = listenerTelemetry(withTracing("10.0.2.1"), push);
  assert.equal(
    listenerTelemetry(withTracing("10.0.2.2"), push),
    a,
    "the tracer's address is the bootstrap's",
  );
  assert.notEqual(listenerTelemetry(withTracing("10.0.2.3", 5), push), a);
  assert.equal(listenerTelemetry(withTracing("10.0.2.3", 5), push).tracing?.sampling, 5);
});
