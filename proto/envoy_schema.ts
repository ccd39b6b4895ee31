/**
 * Loads Envoy's v3 API schema (the `.proto` files shipped in `@grpc/grpc-js-xds`'s `deps/` folder) into one
 * protobufjs `Root`, with `keepCase` so field names are the snake_case names of the `.proto` files.
 *
 * Caveat: protobufjs replaces every `google/protobuf/*.proto` import that it bundles (any, duration, struct,
 * timestamp, wrappers, empty, field_mask) with its own definitions. Those keep snake_case where the official
 * files have it (`type_url`), but `google.protobuf.Value` uses camelCase field names (`stringValue`,
 * `structValue`, `listValue`, ...) whatever `keepCase` says. The wire format is unaffected (field numbers are
 * the same), so bytes from any real client decode correctly, but an object written with `string_value` is
 * silently encoded as an empty Value. Use `jsonToStruct`/`structToJson` from `struct_json.ts`.
 *
 * @module
 */
import protobuf from "protobufjs";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folders under `@grpc/grpc-js-xds/deps/` that together form Envoy's import roots. */
export const ENVOY_DEPS_FOLDERS: readonly string[] = [
  "envoy-api",
  "xds",
  "googleapis",
  "protoc-gen-validate",
];

/** The `.proto` files loaded by `loadEnvoySchema()`; their imports are loaded with them. */
export const ENVOY_PROTO_FILES: readonly string[] = [
  "envoy/service/discovery/v3/ads.proto",
  "envoy/service/discovery/v3/discovery.proto",
  "envoy/service/secret/v3/sds.proto",
  "envoy/service/status/v3/csds.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/config/bootstrap/v3/bootstrap.proto",
  "envoy/admin/v3/config_dump.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/filters/network/redis_proxy/v3/redis_proxy.proto",
  "envoy/config/filter/network/mysql_proxy/v1alpha1/mysql_proxy.proto",
  "envoy/extensions/filters/network/thrift_proxy/v3/thrift_proxy.proto",
  "envoy/extensions/filters/network/sni_cluster/v3/sni_cluster.proto",
  "envoy/extensions/filters/network/rbac/v3/rbac.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/http/fault/v3/fault.proto",
  "envoy/extensions/filters/http/cors/v3/cors.proto",
  "envoy/extensions/filters/http/rbac/v3/rbac.proto",
  "envoy/extensions/filters/http/jwt_authn/v3/config.proto",
  "envoy/extensions/filters/http/grpc_stats/v3/config.proto",
  "envoy/extensions/filters/http/grpc_web/v3/grpc_web.proto",
  "envoy/extensions/filters/http/wasm/v3/wasm.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto",
  "envoy/extensions/filters/listener/original_dst/v3/original_dst.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  "envoy/extensions/transport_sockets/tls/v3/secret.proto",
  "envoy/extensions/transport_sockets/tls/v3/common.proto",
  "envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto",
  "envoy/extensions/access_loggers/file/v3/file.proto",
  "envoy/extensions/access_loggers/grpc/v3/als.proto",
  "envoy/config/trace/v3/zipkin.proto",
  "envoy/config/trace/v3/lightstep.proto",
  "envoy/config/trace/v3/datadog.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/extensions/clusters/aggregate/v3/cluster.proto",
  // Load-balancing policies a gRPC cluster may embed (gRFC A52).
  "envoy/extensions/load_balancing_policies/least_request/v3/least_request.proto",
  "envoy/extensions/load_balancing_policies/random/v3/random.proto",
  "envoy/extensions/load_balancing_policies/round_robin/v3/round_robin.proto",
  "envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality.proto",
  "udpa/type/v1/typed_struct.proto",
  "xds/type/v3/typed_struct.proto",
  "google/rpc/status.proto",
];

/** Where `.proto` imports are looked up, in order. */
export interface ProtoIncludePaths {
  /** The `@grpc/grpc-js-xds/deps` folder holding `envoy-api`, `xds`, `googleapis`, `protoc-gen-validate`. */
  readonly depsDir: string;
  /** The protobufjs package root; it ships `google/protobuf/descriptor.proto`, which PGV's options extend. */
  readonly protobufjsDir: string;
}

/**
 * Walks up from a module's resolved file URL to the folder whose `package.json` names `packageName`.
 * `resolve` calls `import.meta.resolve` with a literal so that publishing can rewrite the specifier.
 */
function packageRootOf(resolve: () => string, packageName: string): string | undefined {
  let resolved: string;
  try {
    resolved = resolve();
  } catch {
    return undefined;
  }
  if (!resolved.startsWith("file:")) return undefined;
  let dir = dirname(fileURLToPath(resolved));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(Deno.readTextFileSync(manifest)).name === packageName) return dir;
      } catch {
        // A nested package.json that is not JSON is not the root we look for; keep walking up.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The repository root, which holds `node_modules/` when the workspace uses `"nodeModulesDir": "auto"`. */
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Finds the folders that Envoy's schema imports from.
 *
 * @throws {Error} when `@grpc/grpc-js-xds`'s `deps/envoy-api` folder or protobufjs's `google/protobuf` folder
 *   cannot be found, naming every place looked at
 */
export function findProtoIncludePaths(): ProtoIncludePaths {
  const depsCandidates = [
    packageRootOf(() => import.meta.resolve("@grpc/grpc-js-xds"), "@grpc/grpc-js-xds"),
    join(REPO_ROOT, "node_modules", "@grpc", "grpc-js-xds"),
  ].filter((dir): dir is string => dir !== undefined).map((dir) => join(dir, "deps"));
  const depsDir = depsCandidates.find((dir) => existsSync(join(dir, "envoy-api", "envoy")));
  if (depsDir === undefined) {
    throw new Error(
      `Cannot find Envoy's .proto files: no "envoy-api/envoy" folder in ${
        depsCandidates.map((dir) => `"${dir}"`).join(" or ")
      }; expected the npm package "@grpc/grpc-js-xds" installed under node_modules (run "deno install")`,
    );
  }
  const pbCandidates = [
    packageRootOf(() => import.meta.resolve("protobufjs"), "protobufjs"),
    join(REPO_ROOT, "node_modules", "protobufjs"),
  ].filter((dir): dir is string => dir !== undefined);
  const protobufjsDir = pbCandidates.find((dir) =>
    existsSync(join(dir, "google", "protobuf", "descriptor.proto"))
  );
  if (protobufjsDir === undefined) {
    throw new Error(
      `Cannot find "google/protobuf/descriptor.proto" in ${
        pbCandidates.map((dir) => `"${dir}"`).join(" or ")
      }; expected the npm package "protobufjs" installed under node_modules (run "deno install")`,
    );
  }
  return { depsDir, protobufjsDir };
}

/** The ordered list of folders an import path is resolved against. */
function includeDirs(paths: ProtoIncludePaths): string[] {
  return [...ENVOY_DEPS_FOLDERS.map((folder) => join(paths.depsDir, folder)), paths.protobufjsDir];
}

/**
 * Creates a protobufjs `Root` whose imports resolve against Envoy's include folders and loads `files` into it.
 *
 * @param files import-style paths such as `"envoy/config/cluster/v3/cluster.proto"`
 * @param paths where to look; found with `findProtoIncludePaths()` when omitted
 * @throws {Error} naming the file when one cannot be read or parsed (the protobufjs error is the `cause`)
 */
export function loadProtoFiles(
  files: readonly string[],
  paths: ProtoIncludePaths = findProtoIncludePaths(),
  root: protobuf.Root = new protobuf.Root(),
): protobuf.Root {
  const dirs = includeDirs(paths);
  // Envoy's imports are always relative to an include root, never to the importing file, so origin is unused.
  root.resolvePath = (_origin: string, target: string): string => {
    for (const dir of dirs) {
      const candidate = join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    // Returning a path that does not exist makes protobufjs fail loudly instead of skipping the import.
    return join(dirs[0], target);
  };
  try {
    root.loadSync([...files], { keepCase: true });
    root.resolveAll();
  } catch (cause) {
    throw new Error(
      `Cannot load the protobuf schema from ${dirs.map((dir) => `"${dir}"`).join(", ")}: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
  }
  return root;
}

let envoyRoot: protobuf.Root | undefined;

/**
 * Returns Envoy's v3 API schema: `ENVOY_PROTO_FILES`, loaded on first use, then the same `Root` every time.
 * Nothing adds to it later, so what encodes or validates never depends on which module loaded first; a
 * program that needs more builds its own root with {@link loadProtoFiles}.
 *
 * @returns the shared root; read-only
 */
export function loadEnvoySchema(): protobuf.Root {
  envoyRoot ??= loadProtoFiles(ENVOY_PROTO_FILES);
  return envoyRoot;
}
