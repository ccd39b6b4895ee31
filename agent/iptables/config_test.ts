import assert from "node:assert/strict";
import { iptablesConfig, iptablesConfigFromFlags, type IptablesFlags } from "./config.ts";

const noUser = { lookupUser: () => undefined };

Deno.test("iptablesConfigFromFlags gives the reference defaults", () => {
  const config = iptablesConfigFromFlags({}, {}, noUser);
  assert.deepEqual(
    { ...config },
    {
      proxyPort: 15001,
      inboundCapturePort: 15006,
      inboundTunnelPort: 15008,
      proxyUids: [1337],
      proxyGids: [1337],
      interceptionMode: "REDIRECT",
      inboundPorts: [],
      localExcludePorts: [],
      outboundPortsInclude: [],
      outboundPortsExclude: [],
      serviceCidrs: [],
      serviceExcludeCidrs: [],
      virtualInterfaces: [],
      tproxyMark: "1337",
      tproxyRouteTable: "133",
      probePort: 15002,
      probeTimeoutMs: 5000,
      dryRun: false,
      restoreFormat: false,
      runValidation: false,
      skipRuleApply: false,
      dnsCapture: false,
      enableIpv6: false,
    },
  );
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.proxyUids));
});

Deno.test("The default proxy uid and gid come from PROXY_USER's passwd entry", async (t) => {
  const asked: string[] = [];
  const lookupUser = (name: string) => {
    asked.push(name);
    return name === "envoy" ? { uid: 101, gid: 102 } : undefined;
  };
  await t.step("PROXY_USER defaults to mesh-proxy, and an unknown user falls back to 1337", () => {
    const config = iptablesConfigFromFlags({}, {}, { lookupUser });
    assert.deepEqual(asked, ["mesh-proxy"]);
    assert.deepEqual([config.proxyUids, config.proxyGids], [[1337], [1337]]);
  });
  await t.step("a known user gives its uid and its gid", () => {
    const config = iptablesConfigFromFlags({}, { PROXY_USER: "envoy" }, { lookupUser });
    assert.deepEqual([config.proxyUids, config.proxyGids], [[101], [102]]);
  });
  await t.step("an explicit uid list is also the default gid list, as in the reference", () => {
    const config = iptablesConfigFromFlags({ "proxy-uid": "3, 4" }, { PROXY_USER: "envoy" }, { lookupUser });
    assert.deepEqual([config.proxyUids, config.proxyGids], [[3, 4], [3, 4]]);
  });
  await t.step("an explicit gid list wins over the looked-up gid", () => {
    const config = iptablesConfigFromFlags({ "proxy-gid": "7" }, { PROXY_USER: "envoy" }, { lookupUser });
    assert.deepEqual([config.proxyUids, config.proxyGids], [[101], [7]]);
  });
});

Deno.test("Flags win over the environment, and empty flags fall back to it", () => {
  const env = {
    PROXY_PORT: "17001",
    INBOUND_CAPTURE_PORT: "17006",
    INBOUND_TUNNEL_PORT: "17008",
    MESH_INBOUND_PORTS: "*",
    MESH_LOCAL_EXCLUDE_PORTS: "15020,15021",
    MESH_SERVICE_CIDR: "10.0.0.0/8",
    MESH_SERVICE_EXCLUDE_CIDR: "10.1.0.0/16",
    MESH_INBOUND_INTERCEPTION_MODE: "TPROXY",
    MESH_INBOUND_TPROXY_MARK: "0x400",
    MESH_INBOUND_TPROXY_ROUTE_TABLE: "200",
    MESH_LOCAL_OUTBOUND_PORTS_EXCLUDE: "9090",
    MESH_OUTBOUND_PORTS: "3306",
    ORCH_VIRT_INTERFACES: "eth1",
    MESH_META_DNS_CAPTURE: true,
  };
  const fromEnv = iptablesConfigFromFlags({ "envoy-port": "" }, env, noUser);
  assert.equal(fromEnv.proxyPort, 17001);
  assert.equal(fromEnv.inboundCapturePort, 17006);
  assert.equal(fromEnv.inboundTunnelPort, 17008);
  assert.equal(fromEnv.inboundPorts, "*");
  assert.deepEqual(fromEnv.localExcludePorts, [15020, 15021]);
  assert.deepEqual(fromEnv.serviceCidrs !== "*" && fromEnv.serviceCidrs.map((cidr) => cidr.text), [
    "10.0.0.0/8",
  ]);
  assert.deepEqual(fromEnv.serviceExcludeCidrs.map((cidr) => cidr.text), ["10.1.0.0/16"]);
  assert.equal(fromEnv.interceptionMode, "TPROXY");
  assert.equal(fromEnv.tproxyMark, "0x400");
  assert.equal(fromEnv.tproxyRouteTable, "200");
  assert.deepEqual(fromEnv.outboundPortsExclude, [9090]);
  assert.deepEqual(fromEnv.outboundPortsInclude, [3306]);
  assert.deepEqual(fromEnv.virtualInterfaces, ["eth1"]);
  assert.equal(fromEnv.dnsCapture, true);

  const flags: IptablesFlags = {
    "envoy-port": "16001",
    "mesh-inbound-ports": "80, 8080",
    "mesh-service-cidr": "*",
    "mesh-inbound-interception-mode": "REDIRECT",
    "orch-virt-interfaces": "veth+,eth2",
    "probe-timeout": "1.5s",
    "iptables-probe-port": "15999",
    "dry-run": true,
    "restore-format": "true",
    "run-validation": "false",
    "skip-rule-apply": true,
  };
  const fromFlags = iptablesConfigFromFlags(flags, env, noUser);
  assert.equal(fromFlags.proxyPort, 16001);
  assert.deepEqual(fromFlags.inboundPorts, [80, 8080]);
  assert.equal(fromFlags.serviceCidrs, "*");
  assert.equal(fromFlags.interceptionMode, "REDIRECT");
  assert.deepEqual(fromFlags.virtualInterfaces, ["veth+", "eth2"]);
  assert.equal(fromFlags.probeTimeoutMs, 1500);
  assert.equal(fromFlags.probePort, 15999);
  assert.deepEqual(
    [fromFlags.dryRun, fromFlags.restoreFormat, fromFlags.runValidation, fromFlags.skipRuleApply],
    [true, true, false, true],
  );
});

Deno.test("IPv6 is enabled by any IPv6 range or pod address", async (t) => {
  await t.step("IPv4 only", () => {
    const config = iptablesConfigFromFlags({ "mesh-service-cidr": "10.0.0.0/8" }, {}, {
      ...noUser,
      podIps: ["10.1.0.2"],
    });
    assert.equal(config.enableIpv6, false);
  });
  await t.step("an IPv6 service CIDR", () => {
    assert.equal(
      iptablesConfigFromFlags({ "mesh-service-cidr": "10.0.0.0/8,fd00::/8" }, {}, noUser).enableIpv6,
      true,
    );
  });
  await t.step("an IPv6 excluded CIDR from the environment", () => {
    assert.equal(
      iptablesConfigFromFlags({}, { MESH_SERVICE_EXCLUDE_CIDR: "fd00::/8" }, noUser).enableIpv6,
      true,
    );
  });
  await t.step("an IPv6 pod address", () => {
    assert.equal(
      iptablesConfigFromFlags({}, {}, { ...noUser, podIps: ["10.1.0.2", "fd00::2"] }).enableIpv6,
      true,
    );
  });
});

Deno.test("Invalid flag values throw errors naming the flag, the value and what is expected", async (t) => {
  const cases: [IptablesFlags, typeof RangeError | typeof TypeError, string][] = [
    [{ "envoy-port": "abc" }, RangeError, `--envoy-port "abc": expected a port from 1 to 65535`],
    [{ "envoy-port": "0" }, RangeError, `--envoy-port "0": expected a port`],
    [{ "inbound-capture-port": "70000" }, RangeError, `--inbound-capture-port "70000"`],
    [{ "envoy-port": true }, TypeError, `--envoy-port "true": expected a string value`],
    [{ "mesh-inbound-ports": "80,http" }, RangeError, `--mesh-inbound-ports "http": expected a port`],
    [
      { "mesh-service-cidr": "10.0.0.0/33" },
      RangeError,
      `--mesh-service-cidr entry "10.0.0.0/33": expected a CIDR`,
    ],
    [
      { "mesh-service-exclude-cidr": "*" },
      RangeError,
      `--mesh-service-exclude-cidr "*": expected a comma-separated`,
    ],
    [{ "mesh-inbound-interception-mode": "tproxy" }, TypeError, `"tproxy": expected "REDIRECT" or "TPROXY"`],
    [{ "proxy-uid": "root" }, RangeError, `--proxy-uid "root": expected a numeric id`],
    [{ "proxy-gid": "-1" }, RangeError, `--proxy-gid "-1": expected a numeric id`],
    [
      { "mesh-inbound-tproxy-mark": "0" },
      RangeError,
      `--mesh-inbound-tproxy-mark "0": expected a packet mark`,
    ],
    [{ "mesh-inbound-tproxy-mark": "0x1ffffffff" }, RangeError, `--mesh-inbound-tproxy-mark "0x1ffffffff"`],
    [{ "mesh-inbound-tproxy-route-table": "254" }, RangeError, `"254": expected a routing table number`],
    [{ "mesh-inbound-tproxy-route-table": "main" }, RangeError, `--mesh-inbound-tproxy-route-table "main"`],
    [
      { "orch-virt-interfaces": "a/b" },
      RangeError,
      `--orch-virt-interfaces entry "a/b": expected an interface name`,
    ],
    [
      { "orch-virt-interfaces": "abcdefghijklmnop" },
      RangeError,
      `"abcdefghijklmnop": expected an interface name`,
    ],
    [{ "probe-timeout": "5" }, RangeError, `--probe-timeout "5": expected a positive duration`],
    [{ "probe-timeout": "0s" }, RangeError, `--probe-timeout "0s": expected a positive duration`],
    [{ "run-validation": "yes" }, TypeError, `--run-validation "yes": expected true or false`],
  ];
  for (const [flags, kind, message] of cases) {
    await t.step(JSON.stringify(flags), () => {
      assert.throws(() => iptablesConfigFromFlags(flags, {}, noUser), (error: Error) => {
        assert.ok(error instanceof kind, `${error.name}: ${error.message}`);
        assert.ok(error.message.includes(message), error.message);
        assert.match(error.message, /^Invalid /);
        return true;
      });
    });
  }
});

Deno.test("iptablesConfig validates typed options and names the field", () => {
  assert.throws(
    () => iptablesConfig({ proxyPort: 0 }),
    /Invalid proxyPort "0": expected a port from 1 to 65535/,
  );
  assert.throws(
    () => iptablesConfig({ proxyUids: [] }),
    /Invalid proxyUids "": expected at least one numeric id/,
  );
  assert.throws(() => iptablesConfig({ serviceCidrs: ["nope"] }), /Invalid serviceCidrs entry "nope"/);
  assert.throws(() => iptablesConfig({ podIps: ["1.2.3"] }), /Invalid podIps entry "1.2.3"/);
  assert.throws(() => iptablesConfig({ probeTimeoutMs: 0 }), /Invalid probeTimeoutMs "0"/);
  assert.throws(
    () => iptablesConfig({ interceptionMode: "NAT" as "REDIRECT" }),
    /Invalid interceptionMode "NAT": expected "REDIRECT" or "TPROXY"/,
  );
});
