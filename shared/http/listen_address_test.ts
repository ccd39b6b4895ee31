import assert from "node:assert/strict";
import { formatAddress, parseListenAddress } from "./listen_address.ts";

Deno.test("parseListenAddress reads Go host:port forms", () => {
  assert.deepEqual(parseListenAddress(":8080", "--httpAddr"), { hostname: "0.0.0.0", port: 8080 });
  assert.deepEqual(parseListenAddress("127.0.0.1:0", "--httpAddr"), { hostname: "127.0.0.1", port: 0 });
  assert.deepEqual(parseListenAddress("[::1]:15010", "--grpcAddr"), { hostname: "::1", port: 15010 });
  assert.throws(
    () => parseListenAddress("8080", "--httpAddr"),
    /Invalid --httpAddr "8080": expected host:port/,
  );
  assert.throws(() => parseListenAddress(":70000", "--httpAddr"), /--httpAddr ":70000"/);
  assert.equal(formatAddress("::1", 80), "[::1]:80");
});
