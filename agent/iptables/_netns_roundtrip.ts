/**
 * Test program run by `netns_roundtrip_test.ts` inside a private network namespace (`unshare -n`), as root:
 * probes before any rule (must fail), applies for real with the real runner (twice: must be idempotent),
 * checks `iptables-save`, validates capture with the probe, cleans, and checks nothing of ours is left.
 * Usage: `deno run <permissions> _netns_roundtrip.ts <scenario>`; prints a JSON summary on success.
 */

import assert from "node:assert/strict";

import { CaptureValidationError, runCaptureProbe } from "./capture_probe.ts";
import {
  type IptablesConfig,
  iptablesConfigFromFlags,
  type IptablesEnv,
  type IptablesFlags,
} from "./config.ts";
import { denoCommandExecutor } from "./executor.ts";
import { chooseProbeTarget } from "./probe_target.ts";
import { applyIptables, cleanIptables, type RunnerDeps } from "./runner.ts";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";

interface Scenario {
  flags: IptablesFlags;
  env?: IptablesEnv;
  podIps?: string[];
  /** Lines `iptables-save`/`ip6tables-save` must show once applied. */
  expectSaved: string[];
  /** Substring the `ip` state must show once applied. */
  expectIp?: string[];
}

const OUTBOUND: Scenario = {
  flags: {
    "mesh-service-cidr": "10.96.0.0/12",
    "mesh-service-exclude-cidr": "10.96.0.10/32",
    "mesh-inbound-ports": "*",
    "mesh-local-exclude-ports": "15020",
    "proxy-uid": "1337",
    "probe-timeout": "1500ms",
  },
  expectSaved: [
    "-A OUTPUT -p tcp -m comment --comment mesh-capture -j MESH_OUTPUT",
    "-A MESH_OUTPUT -d 10.96.0.0/12 -j MESH_REDIRECT",
    "-A MESH_INBOUND -p tcp -m tcp --dport 15020 -j RETURN",
  ],
};

const SCENARIOS: Readonly<Record<string, Scenario>> = {
  // Run as root, not a proxy uid: the probe dials a service CIDR address and lands on the proxy port.
  "outbound": OUTBOUND,
  "outbound-legacy": OUTBOUND,
  // Run as the proxy uid (0 here): the probe dials 127.0.0.6 over lo and lands on the inbound capture port.
  "loopback": {
    flags: { "proxy-uid": "0", "proxy-gid": "0", "mesh-inbound-ports": "8080", "probe-timeout": "1500ms" },
    expectSaved: ["-A MESH_OUTPUT ! -d 127.0.0.1/32 -o lo -m owner --uid-owner 0 -j MESH_IN_REDIRECT"],
  },
  "tproxy-ipv6-dns": {
    flags: {
      "mesh-inbound-interception-mode": "TPROXY",
      "mesh-inbound-ports": "*",
      "mesh-service-cidr": "*",
      "proxy-uid": "1337",
      "orch-virt-interfaces": "v1",
      "probe-timeout": "1500ms",
    },
    env: { MESH_META_DNS_CAPTURE: true, MESH_INBOUND_TPROXY_ROUTE_TABLE: "144" },
    podIps: ["10.1.0.2", "fd00::2"],
    expectSaved: [
      "-A PREROUTING -p tcp -m comment --comment mesh-capture -j MESH_INBOUND",
      "-A MESH_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY",
      "-A OUTPUT -p udp -m udp --dport 53 -m comment --comment mesh-capture -j REDIRECT --to-ports 15053",
      "-A MESH_OUTPUT -s ::6/128 -o lo -j RETURN",
    ],
    expectIp: ["fwmark 0x539 lookup 144", "local default dev lo", "inet6 ::6/128"],
  },
};

const name = Deno.args[0];
const scenario = SCENARIOS[name];
if (!scenario) {
  throw new TypeError(`Invalid scenario "${name}": expected one of ${Object.keys(SCENARIOS).join(", ")}`);
}

const exec = denoCommandExecutor();
const logger = new RecordingLogger();
const deps: RunnerDeps = { exec, logger, print: () => {}, identity: { uid: Deno.uid()!, gid: Deno.gid()! } };
const config = iptablesConfigFromFlags(scenario.flags, scenario.env ?? {}, { podIps: scenario.podIps });
const routeTable = config.tproxyRouteTable;

async function run(cmd: string, ...args: string[]): Promise<string> {
  const result = await exec(cmd, args);
  assert.equal(result.code, 0, `${cmd} ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

/** Both families' rules without comments and counters, which change with traffic. */
async function saved(): Promise<string> {
  const text = (await run("iptables-save")) + (await run("ip6tables-save"));
  return text.split("\n").filter((line) => !line.startsWith("#")).join("\n").replace(/\[\d+:\d+\]/g, "[0:0]");
}

async function routes(table: string): Promise<string> {
  const result = await exec("ip", ["route", "show", "table", table]);
  if (result.code !== 0 && result.stderr.includes("does not exist")) return "";
  assert.equal(result.code, 0, `ip route show table ${table} failed: ${result.stderr}`);
  return result.stdout;
}

async function ipState(): Promise<string> {
  return [
    await run("ip", "rule", "show"),
    `table ${routeTable}: ${await routes(routeTable)}`,
    await run("ip", "-6", "addr", "show", "dev", "lo"),
  ].join("\n");
}

async function probeFails(config: IptablesConfig, when: string): Promise<string> {
  const target = chooseProbeTarget(config, deps.identity!);
  let message = "";
  await assert.rejects(runCaptureProbe(config, target, logger), (error) => {
    assert.ok(
      error instanceof CaptureValidationError,
      `Probe ${when}: expected CaptureValidationError, got ${error}`,
    );
    message = error.message;
    return true;
  });
  return message;
}

const version = await run("iptables-restore", "--version");
const backend = version.includes("nf_tables") ? "nft" : version.includes("legacy") ? "legacy" : version;
assert.equal(backend, name.endsWith("-legacy") ? "legacy" : "nft", "Unexpected iptables backend on PATH");

const failureBefore = await probeFails(config, "before any rule");

const first = await applyIptables({ ...config, runValidation: true }, deps);
assert.ok(first.applied && first.probe, "First apply did not validate");
const expectedPort = config.proxyUids.includes(deps.identity!.uid)
  ? config.inboundCapturePort
  : config.proxyPort;
assert.equal(first.probe.arrivedAt, expectedPort, "Probe arrived at an unexpected redirect target");
const savedOnce = await saved();
for (const line of scenario.expectSaved) {
  assert.ok(savedOnce.includes(line), `iptables-save lacks "${line}":\n${savedOnce}`);
}
const ipOnce = await ipState();
for (const part of scenario.expectIp ?? []) {
  assert.ok(ipOnce.includes(part), `ip state lacks "${part}":\n${ipOnce}`);
}

const second = await applyIptables({ ...config, runValidation: true }, deps);
assert.ok(second.probe, "Second apply did not validate");
assert.equal(await saved(), savedOnce, "Applying twice changed the rules");
assert.equal(await ipState(), ipOnce, "Applying twice changed the ip rules, routes or addresses");

await cleanIptables(config, deps);
const savedClean = await saved();
assert.doesNotMatch(savedClean, /MESH_|mesh-capture/, `Rules left after clean:\n${savedClean}`);
const ipClean = await ipState();
assert.doesNotMatch(
  ipClean,
  new RegExp(`lookup ${routeTable}\\b|table ${routeTable}: \\S|::6/128`),
  `ip state left:\n${ipClean}`,
);
const failureAfter = await probeFails(config, "after clean");
await cleanIptables(config, deps);
assert.equal(await saved(), savedClean, "Cleaning twice changed the rules");

await Deno.stdout.write(new TextEncoder().encode(
  JSON.stringify({
    scenario: name,
    backend,
    arrivedAt: first.probe.arrivedAt,
    target: first.probe.target,
    failureBefore,
    failureAfter,
  }) + "\n",
));
