import assert from "node:assert/strict";
import { iptablesConfig, type IptablesOptions } from "./config.ts";
import { chooseProbeTarget } from "./probe_target.ts";

const ROOT = { uid: 0, gid: 0 };
const pick = (options: IptablesOptions, identity = ROOT) =>
  chooseProbeTarget(iptablesConfig(options), identity);

Deno.test("The first proxy uid probes over lo via 127.0.0.6 to the inbound capture port", () => {
  const target = pick({ proxyUids: [0, 5] });
  assert.deepEqual(
    { ...target, path: undefined },
    { hostname: "127.0.0.6", port: 15002, family: 4, expectedPort: 15006, path: undefined },
  );
});

Deno.test("Other users probe an address the outbound rules capture, landing on the proxy port", async (t) => {
  const cases: [string, IptablesOptions, string, 4 | 6][] = [
    ["all outbound traffic", { serviceCidrs: "*" }, "192.0.2.1", 4],
    [
      "all but an excluded documentation range",
      { serviceCidrs: "*", serviceExcludeCidrs: ["192.0.2.0/24"] },
      "198.51.100.1",
      4,
    ],
    ["a service CIDR", { serviceCidrs: ["10.96.0.0/12"] }, "10.96.0.1", 4],
    [
      "a service CIDR minus an excluded address",
      { serviceCidrs: ["10.96.0.0/12"], serviceExcludeCidrs: ["10.96.0.1/32"] },
      "10.96.0.2",
      4,
    ],
    ["a single address", { serviceCidrs: ["10.0.0.9/32"] }, "10.0.0.9", 4],
    [
      "loopback 127.0.0.1 is skipped for the next range",
      { serviceCidrs: ["127.0.0.1/32", "10.0.0.0/8"] },
      "10.0.0.1",
      4,
    ],
    ["IPv4 before IPv6", { serviceCidrs: ["fd00::/8", "10.0.0.0/8"] }, "10.0.0.1", 4],
    ["IPv6 only", { serviceCidrs: ["fd00::/8"] }, "fd00::1", 6],
    ["the probe port listed as an outbound port", { outboundPortsInclude: [15002] }, "192.0.2.1", 4],
  ];
  for (const [name, options, hostname, family] of cases) {
    await t.step(name, () => {
      const target = pick({ proxyUids: [1337], ...options });
      assert.equal(target.hostname, hostname);
      assert.equal(target.family, family);
      assert.equal(target.expectedPort, 15001);
      assert.equal(target.port, 15002);
    });
  }
});

Deno.test("Probes that no rule would capture are refused with the reason", async (t) => {
  await t.step("a non-proxy user without outbound capture", () => {
    assert.throws(
      () => pick({ proxyUids: [1337] }, { uid: 1000, gid: 1000 }),
      /uid 1000, gid 1000: outbound capture is off/,
    );
  });
  await t.step("a later proxy uid, whose lo traffic an earlier uid's rule returns", () => {
    assert.throws(
      () => pick({ proxyUids: [1337, 0] }),
      /only the first proxy uid \(1337\) has its loopback calls redirected/,
    );
  });
  await t.step("an excluded probe port", () => {
    assert.throws(
      () => pick({ serviceCidrs: "*", outboundPortsExclude: [15002] }),
      /probe port 15002 is in --mesh-local-outbound-ports-exclude/,
    );
  });
  await t.step("a probe port equal to a redirect target", () => {
    assert.throws(() => pick({ serviceCidrs: "*", probePort: 15001 }), RangeError);
  });
  await t.step("a wholly excluded service CIDR", () => {
    assert.throws(
      () => pick({ serviceCidrs: ["10.0.0.0/30"], serviceExcludeCidrs: ["10.0.0.0/29"] }),
      /outbound capture is off/,
    );
  });
});

Deno.test("A gid-only exemption still probes over lo when loopback ranges are captured", () => {
  const target = pick({ proxyUids: [1337], proxyGids: [0], serviceCidrs: ["127.1.0.0/16"] });
  assert.equal(target.hostname, "127.0.0.6");
});
