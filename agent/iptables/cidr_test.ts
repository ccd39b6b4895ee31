import assert from "node:assert/strict";
import { cidrContains, formatIp, parseCidr, parseIp } from "./cidr.ts";

Deno.test("parseCidr masks to the network address and prints canonically", async (t) => {
  const cases: [string, string, 4 | 6, boolean][] = [
    ["10.1.2.3/8", "10.0.0.0/8", 4, false],
    ["192.168.7.3/16", "192.168.0.0/16", 4, false],
    ["0.0.0.0/0", "0.0.0.0/0", 4, false],
    ["127.1.2.3/32", "127.1.2.3/32", 4, true],
    ["2001:DB8:0:0::1/32", "2001:db8::/32", 6, false],
    ["fd00:0:1::/48", "fd00:0:1::/48", 6, false],
    ["::1/128", "::1/128", 6, true],
    ["::ffff:10.0.0.1/128", "::ffff:a00:1/128", 6, false],
    ["fd00:10::a/128", "fd00:10::a/128", 6, false],
    ["1:0:0:1:0:0:0:1/128", "1:0:0:1::1/128", 6, false],
  ];
  for (const [input, text, family, loopback] of cases) {
    await t.step(input, () => {
      const cidr = parseCidr(input);
      assert.equal(cidr.text, text);
      assert.equal(cidr.family, family);
      assert.equal(cidr.loopback, loopback);
      assert.ok(Object.isFrozen(cidr));
    });
  }
});

Deno.test("parseCidr rejects malformed ranges with a RangeError naming the text", async (t) => {
  for (
    const input of [
      "10.0.0.0",
      "10.0.0.0/33",
      "10.0.0/8",
      "010.0.0.0/8",
      "256.0.0.0/8",
      "fd00::/129",
      "fd00:::1/64",
      "x/8",
      "10.0.0.0/08",
      "",
    ]
  ) {
    await t.step(JSON.stringify(input), () => {
      assert.throws(() => parseCidr(input), (error: Error) => {
        assert.ok(error instanceof RangeError);
        assert.ok(error.message.includes(`"${input}"`), error.message);
        return true;
      });
    });
  }
});

Deno.test("cidrContains checks membership within the same family only", () => {
  const range = parseCidr("10.96.0.0/12");
  assert.equal(cidrContains(range, parseIp("10.100.1.1")!.bytes), true);
  assert.equal(cidrContains(range, parseIp("10.112.0.1")!.bytes), false);
  assert.equal(cidrContains(range, parseIp("fd00::1")!.bytes), false);
});

Deno.test("formatIp compresses the longest zero run of an IPv6 address", () => {
  assert.equal(formatIp(parseIp("0:0:1:0:0:0:1:0")!.bytes), "0:0:1::1:0");
  assert.equal(formatIp(parseIp("::")!.bytes), "::");
  assert.equal(formatIp(parseIp("1.2.3.4")!.bytes), "1.2.3.4");
});
