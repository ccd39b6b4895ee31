import assert from "node:assert/strict";
import { assertGolden, assertNetnsOk, runInNetns, TESTDATA } from "./_test_support.ts";
import { buildIptablesPlan } from "./build_plan.ts";
import { buildCleanCommands } from "./clean_plan.ts";
import { iptablesConfig, type IptablesOptions } from "./config.ts";
import { commandLine, renderCommands, renderRestore } from "./render.ts";
import { IPROUTE2, IPTABLES, needs, NETNS } from "@mesh/shared/testing/system_tools";

// Test-only switch: UPDATE_GOLDEN=1 rewrites the golden files (needs --allow-env=UPDATE_GOLDEN).
const UPDATE = Deno.env.get("UPDATE_GOLDEN") === "1";

/** One golden case: `<name>.v4.golden`, `<name>.v6.golden` (when IPv6) and `<name>.dry-run.golden`. */
const CASES: Readonly<Record<string, IptablesOptions>> = {
  "defaults": {},
  "inbound-ports-wildcard": { inboundPorts: "*", localExcludePorts: [15020, 15021, 15090] },
  "inbound-ports-list": { inboundPorts: [80, 8080], serviceCidrs: "*" },
  "tproxy-inbound-ports": { interceptionMode: "TPROXY", inboundPorts: [80, 443], serviceCidrs: "*" },
  "tproxy-inbound-wildcard": {
    interceptionMode: "TPROXY",
    inboundPorts: "*",
    localExcludePorts: [15020],
    tproxyMark: "0x400",
    tproxyRouteTable: "200",
  },
  "outbound-cidrs": {
    serviceCidrs: ["10.96.0.0/12", "192.168.7.3/16"],
    serviceExcludeCidrs: ["10.96.0.10/32"],
  },
  "outbound-wildcard-exclude": { serviceCidrs: "*", serviceExcludeCidrs: ["10.0.0.0/8", "172.16.0.0/12"] },
  "loopback-cidr": { serviceCidrs: ["127.1.2.3/32", "10.0.0.0/8"], inboundPorts: "*" },
  "uid-gid-lists": { proxyUids: [1337, 3], proxyGids: [1, 2], serviceCidrs: "*", inboundPorts: "*" },
  "ipv6": {
    serviceCidrs: ["10.0.0.0/8", "fd00::/8"],
    serviceExcludeCidrs: ["fd00:0:1::/48"],
    inboundPorts: "*",
    localExcludePorts: [15020],
    outboundPortsExclude: [9090],
  },
  "ipv6-pod-address": { serviceCidrs: "*", inboundPorts: [9080], podIps: ["10.1.0.2", "fd00::2"] },
  "virtual-interfaces": { virtualInterfaces: ["eth1", "veth+"], serviceCidrs: "*", inboundPorts: "*" },
  "virtual-interfaces-cidrs": { virtualInterfaces: ["eth1"], serviceCidrs: ["10.96.0.0/12", "10.4.0.0/14"] },
  "dns-capture": {
    dnsCapture: true,
    serviceCidrs: "*",
    inboundPorts: "*",
    proxyUids: [1337, 3],
    proxyGids: [1337],
  },
  "outbound-ports": { outboundPortsInclude: [3306, 5432], outboundPortsExclude: [15020, 9090] },
  "everything": {
    interceptionMode: "TPROXY",
    inboundPorts: "*",
    localExcludePorts: [15020],
    serviceCidrs: ["10.96.0.0/12", "fd00:10::/64"],
    serviceExcludeCidrs: ["10.96.0.10/32", "fd00:10::a/128"],
    outboundPortsInclude: [3306],
    outboundPortsExclude: [9090],
    virtualInterfaces: ["eth1"],
    proxyUids: [1337, 3],
    proxyGids: [7],
    dnsCapture: true,
    proxyPort: 16001,
    inboundCapturePort: 16006,
    inboundTunnelPort: 16008,
  },
};

function rendered(name: string) {
  const plan = buildIptablesPlan(iptablesConfig(CASES[name]));
  return {
    v4: renderRestore(plan.v4),
    v6: plan.v6 ? renderRestore(plan.v6) : undefined,
    dryRun: renderCommands(plan),
  };
}

Deno.test("Rendered rules match the golden files", async (t) => {
  for (const name of Object.keys(CASES)) {
    await t.step(name, async () => {
      const { v4, v6, dryRun } = rendered(name);
      await assertGolden(`${name}.v4.golden`, v4, UPDATE);
      await assertGolden(`${name}.dry-run.golden`, dryRun, UPDATE);
      if (v6 !== undefined) await assertGolden(`${name}.v6.golden`, v6, UPDATE);
    });
  }
  await t.step("no golden file is left over from a removed case", async () => {
    const expected = new Set(
      Object.keys(CASES).flatMap((name) => {
        const files = [`${name}.v4.golden`, `${name}.dry-run.golden`];
        return rendered(name).v6 === undefined ? files : [...files, `${name}.v6.golden`];
      }),
    );
    for await (const entry of Deno.readDir(TESTDATA)) {
      if (entry.name.endsWith(".golden") && !entry.name.startsWith("clean.")) {
        assert.ok(expected.has(entry.name), `Unexpected golden file "${entry.name}"`);
      }
    }
  });
});

Deno.test(
  "Every golden restore file passes --test and applies, nft and legacy, in a private network namespace",
  needs(NETNS, IPTABLES, IPROUTE2),
  async (t) => {
    // `--test` only parses (the nft variant accepts jumps to missing chains), so each file is also applied for real.
    for await (const entry of Deno.readDir(TESTDATA)) {
      const match = /\.(v4|v6)\.golden$/.exec(entry.name);
      if (!match) continue;
      const text = await Deno.readTextFile(new URL(entry.name, TESTDATA));
      const family = match[1] === "v4" ? "iptables" : "ip6tables";
      for (const tool of [`${family}-restore`, `${family}-legacy-restore`]) {
        await t.step(`${tool} < ${entry.name}`, async () => {
          const script =
            `f=$(mktemp) && cat > "$f" && ${tool} --noflush --test < "$f" && ${tool} --noflush < "$f"; ` +
            `rc=$?; rm -f "$f"; exit $rc`;
          assertNetnsOk(await runInNetns(script, text), `${tool} < ${entry.name}`);
        });
      }
    }
  },
);

Deno.test(
  "Every golden dry-run script applies cleanly in a fresh network namespace",
  needs(NETNS, IPTABLES, IPROUTE2),
  async (t) => {
    for await (const entry of Deno.readDir(TESTDATA)) {
      if (!entry.name.endsWith(".dry-run.golden") || entry.name.startsWith("clean.")) continue;
      await t.step(entry.name, async () => {
        const text = await Deno.readTextFile(new URL(entry.name, TESTDATA));
        assertNetnsOk(await runInNetns("sh -e -s", text), `sh -e < ${entry.name}`);
      });
    }
  },
);

Deno.test(
  "Dry-run clean commands undo the dry-run apply commands of the same config",
  needs(NETNS, IPTABLES, IPROUTE2),
  async (t) => {
    for (const name of ["everything", "dns-capture", "virtual-interfaces-cidrs", "tproxy-inbound-wildcard"]) {
      await t.step(name, async () => {
        const config = iptablesConfig(CASES[name]);
        const apply = renderCommands(buildIptablesPlan(config));
        const clean = buildCleanCommands(config).map((command) => `${commandLine(command)} 2>/dev/null\n`)
          .join(
            "",
          );
        // Apply must succeed; clean steps may fail when their target is absent; the end state must hold no trace.
        const script = `sh -e -c "$(cat)"; ` +
          `iptables-save | grep -E 'MESH_|mesh-capture' && exit 3; ip6tables-save | grep -E 'MESH_|mesh-capture' && exit 4; ` +
          `ip rule | grep -q 'lookup ${config.tproxyRouteTable}' && exit 5; exit 0`;
        assertNetnsOk(await runInNetns(script, `${apply}set +e\n${clean}`), `apply then clean of "${name}"`);
      });
    }
  },
);

Deno.test("Dry-run clean commands match the golden file", async () => {
  const config = iptablesConfig({ proxyUids: [1337], virtualInterfaces: ["eth1"] });
  const text = buildCleanCommands(config).map((command) => `${commandLine(command)}\n`).join("");
  await assertGolden("clean.dry-run.golden", text, UPDATE);
});
