import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { encodeAny } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { TYPE_URL } from "@mesh/proto/type_urls";
import { DerivedMemo } from "../../push/derived_memo.ts";
import { type EncodableVirtualHost, encodeRouteConfigurationAny } from "./route_config_bytes.ts";

function host(name: string, cluster: string, builds: string[]): EncodableVirtualHost {
  return {
    key: `${name}->${cluster}`,
    build: () => {
      builds.push(name);
      return {
        name,
        domains: [name, `${name}:80`],
        routes: [{ match: { prefix: "/" }, route: { cluster, timeout: { seconds: "0" } } }],
      };
    },
  };
}

const TAIL = { validate_clusters: { value: false } };

Deno.test("A route configuration assembled from encoded hosts has the bytes of the whole object encoded", () => {
  const schema = loadEnvoySchema();
  const builds: string[] = [];
  const hosts = [host("a", "outbound|80||a", builds), host("b", "outbound|80||b", builds)];
  const assembled = encodeRouteConfigurationAny(new DerivedMemo(), {
    head: { name: "80" },
    hosts,
    tail: TAIL,
  }, schema);
  const whole = encodeAny(TYPE_URL.route, {
    name: "80",
    virtual_hosts: hosts.map((h) => h.build()),
    ...TAIL,
  }, schema);
  assert.ok(Buffer.from(assembled).equals(whole));
});

Deno.test("A virtual host is built once per snapshot, however many route configurations list it", () => {
  const schema = loadEnvoySchema();
  const builds: string[] = [];
  const shared = host("shared", "outbound|80||shared", builds);
  const snapshot = new DerivedMemo();
  const first = encodeRouteConfigurationAny(snapshot, {
    head: { name: "80" },
    hosts: [host("own-1", "c1", builds), shared],
    tail: TAIL,
  }, schema);
  const second = encodeRouteConfigurationAny(snapshot, {
    head: { name: "80" },
    hosts: [host("own-2", "c2", builds), shared],
    tail: TAIL,
  }, schema);
  assert.deepEqual(builds, ["own-1", "shared", "own-2"]);
  assert.notDeepEqual(first, second);
  encodeRouteConfigurationAny(
    new DerivedMemo(),
    { head: { name: "80" }, hosts: [shared], tail: TAIL },
    schema,
  );
  assert.deepEqual(builds, ["own-1", "shared", "own-2", "shared"], "a new snapshot builds its hosts again");
});

Deno.test("Route configuration fields on the wrong side of virtual_hosts are refused with their number", () => {
  const schema = loadEnvoySchema();
  assert.throws(
    () => encodeRouteConfigurationAny(new DerivedMemo(), { head: TAIL, hosts: [], tail: {} }, schema),
    (error: unknown) =>
      error instanceof RangeError &&
      /"validate_clusters" \(number 7\) cannot go in the head/.test(error.message),
  );
  assert.throws(
    () =>
      encodeRouteConfigurationAny(new DerivedMemo(), { head: {}, hosts: [], tail: { name: "80" } }, schema),
    (error: unknown) =>
      error instanceof RangeError && /"name" \(number 1\) cannot go in the tail/.test(error.message),
  );
});

Deno.test("A virtual host that does not fit Envoy's schema is refused with its field path", () => {
  const schema = loadEnvoySchema();
  const bad = { key: "bad", build: () => ({ name: "bad", domains: "not-a-list" }) };
  assert.throws(
    () =>
      encodeRouteConfigurationAny(
        new DerivedMemo(),
        { head: { name: "80" }, hosts: [bad], tail: TAIL },
        schema,
      ),
    (error: unknown) =>
      error instanceof TypeError && /VirtualHost/.test(error.message) && /domains/.test(error.message),
  );
});
