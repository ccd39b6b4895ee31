import assert from "node:assert/strict";
import { silentLogger } from "../log/logger.ts";
import { isLoopbackAddress, loopbackOnly, peerAddress, serveHttp } from "./serve.ts";

/** A non-loopback IPv4 address of this host, if it has one. */
function externalAddress(): string | undefined {
  return Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."))?.address;
}

Deno.test("isLoopbackAddress knows IPv4, IPv6 and mapped loopback", () => {
  assert.deepEqual(
    ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "::ffff:127.0.0.1", "10.0.0.1", "::ffff:10.0.0.1", "fd00::1"]
      .map(isLoopbackAddress),
    [true, true, true, true, true, false, false, false],
  );
});

Deno.test("loopbackOnly answers loopback callers and refuses others without the opt-in", async (t) => {
  const external = externalAddress();
  const secret = () => new Response("secret");
  const routes = (request: Request) => {
    const path = new URL(request.url).pathname;
    if (path === "/closed") return loopbackOnly(secret, false)(request);
    if (path === "/open") return loopbackOnly(secret, true)(request);
    return new Response(peerAddress(request)?.hostname ?? "unknown");
  };
  const server = await serveHttp("test", { hostname: "0.0.0.0", port: 0 }, routes, silentLogger);
  const port = server.address.port;
  try {
    await t.step("the peer address is known to handlers", async () => {
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/peer`)).text(), "127.0.0.1");
    });
    await t.step("a loopback caller is served", async () => {
      const response = await fetch(`http://127.0.0.1:${port}/closed`);
      assert.equal(await response.text(), "secret");
    });
    await t.step({
      name: "another caller gets 403 naming DEBUG_REMOTE_ACCESS",
      ignore: external === undefined,
      fn: async () => {
        const response = await fetch(`http://${external}:${port}/closed`);
        assert.equal(response.status, 403);
        assert.match(await response.text(), /DEBUG_REMOTE_ACCESS=true/);
      },
    });
    await t.step({
      name: "with the opt-in another caller is served",
      ignore: external === undefined,
      fn: async () => {
        assert.equal(await (await fetch(`http://${external}:${port}/open`)).text(), "secret");
      },
    });
  } finally {
    await server.shutdown();
  }
});
