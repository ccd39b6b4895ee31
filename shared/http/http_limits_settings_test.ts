import assert from "node:assert/strict";
import { EnvSettings } from "../env/env_settings.ts";
import { DEFAULT_CONNECTION_LIMITS } from "./connection_guard.ts";
import { httpLimitsFromEnv } from "./http_limits_settings.ts";
import { DEFAULT_REQUEST_LIMITS } from "./request_admission.ts";

Deno.test("httpLimitsFromEnv reads the HTTP bounds, defaults matching the libraries'", () => {
  const defaults = httpLimitsFromEnv(new EnvSettings("discovery", {}));
  assert.deepEqual(defaults.connections, DEFAULT_CONNECTION_LIMITS);
  assert.deepEqual(defaults.requests, DEFAULT_REQUEST_LIMITS);
  const set = httpLimitsFromEnv(
    new EnvSettings("discovery", {
      DISCOVERY_HTTP_MAX_CONNECTIONS: "100",
      DISCOVERY_HTTP_MAX_CONNECTIONS_PER_PEER: "10",
      DISCOVERY_HTTP_MAX_REQUESTS_PER_PEER: "5",
      DISCOVERY_HTTP_MAX_BODY_BYTES_PER_PEER: "4194304",
    }),
  );
  assert.deepEqual(
    [set.connections.maxConnections, set.connections.maxConnectionsPerPeer, set.connections.headerTimeoutMs],
    [100, 10, DEFAULT_CONNECTION_LIMITS.headerTimeoutMs],
  );
  assert.deepEqual([set.requests.maxRequestsPerPeer, set.requests.maxBodyBytesPerPeer], [5, 4194304]);
});

Deno.test("httpLimitsFromEnv refuses bounds that would bound nothing or refuse a valid review", () => {
  assert.throws(
    () =>
      httpLimitsFromEnv(
        new EnvSettings("discovery", {
          DISCOVERY_HTTP_MAX_CONNECTIONS: "10",
          DISCOVERY_HTTP_MAX_CONNECTIONS_PER_PEER: "20",
        }),
      ),
    /DISCOVERY_HTTP_MAX_CONNECTIONS_PER_PEER "20": expected at most DISCOVERY_HTTP_MAX_CONNECTIONS \("10"\)/,
  );
  for (
    const [name, value] of [["DISCOVERY_HTTP_MAX_REQUESTS", "0"], ["DISCOVERY_HTTP_MAX_BODY_BYTES", "1000"]]
  ) {
    assert.throws(() => httpLimitsFromEnv(new EnvSettings("discovery", { [name]: value })), new RegExp(name));
  }
});
