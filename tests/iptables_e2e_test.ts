import assert from "node:assert/strict";
import { programArgs } from "./helpers/programs.ts";
import { IPROUTE2, IPTABLES, needs, NETNS } from "../shared/testing/system_tools.ts";

const ROOT = new URL("../", import.meta.url);

/**
 * Runs a shell script inside a fresh network namespace, returning its output. Like a pod, the namespace has
 * loopback and one interface with a default route, so service addresses are routable.
 */
async function inNamespace(script: string, env: Record<string, string> = {}) {
  const output = await new Deno.Command("unshare", {
    args: ["-n", "sh", "-ec", `${POD_NETWORK}\n${script}`],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

const POD_NETWORK = [
  "ip link set lo up",
  "ip link add eth0 type veth peer name peer0",
  "ip addr add 10.1.0.2/16 dev eth0",
  "ip link set eth0 up",
  "ip link set peer0 up",
  "ip route add default dev eth0",
].join("\n");

const agent = ["deno", ...programArgs("mesh-agent")].map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");

Deno.test(
  "mesh-agent mesh-iptables applies capture, validates it, and mesh-clean-iptables removes it",
  needs(NETNS, IPTABLES, IPROUTE2),
  async () => {
    const result = await inNamespace(`
${agent} mesh-iptables --log_target stderr -i 10.96.0.0/12 -b '*' --run-validation --probe-timeout 3s
echo "--- after apply"
iptables-save -t nat
${agent} mesh-iptables --log_target stderr -i 10.96.0.0/12 -b '*'
echo "--- after second apply"
iptables-save -t nat | grep -c -- '-A MESH_' || true
${agent} mesh-clean-iptables --log_target stderr
echo "--- after clean"
iptables-save
`);
    assert.equal(result.code, 0, result.stderr + result.stdout);
    const [applied, second, cleaned] = result.stdout.split(/--- after (?:second apply|clean)\n/);
    assert.match(applied, /-A OUTPUT -p tcp -m comment --comment mesh-capture -j MESH_OUTPUT/);
    assert.match(applied, /-A MESH_OUTPUT -d 10\.96\.0\.0\/12 -j MESH_REDIRECT/);
    const ruleCount = applied.split("\n").filter((l) => l.startsWith("-A MESH_")).length;
    assert.equal(Number(second.trim()), ruleCount, "applying twice must not duplicate rules");
    assert.doesNotMatch(cleaned, /MESH|mesh-capture/);
  },
);

Deno.test(
  "mesh-agent mesh-iptables --dry-run prints the plan and changes nothing",
  needs(NETNS, IPTABLES, IPROUTE2),
  async () => {
    const result = await inNamespace(`
${agent} mesh-iptables --dry-run -i '*' -b 8080 -p 15001
echo "--- state"
iptables-save -t nat
`);
    assert.equal(result.code, 0, result.stderr);
    const [plan, state] = result.stdout.split("--- state\n");
    assert.match(plan, /iptables -t nat -A MESH_INBOUND -p tcp --dport 8080 -j MESH_IN_REDIRECT/);
    assert.doesNotMatch(state, /MESH/);
  },
);

Deno.test(
  "mesh-agent mesh-iptables takes fallbacks from the environment and rejects bad values",
  needs(NETNS, IPTABLES, IPROUTE2),
  async () => {
    const fromEnv = await inNamespace(`${agent} mesh-iptables --dry-run -f`, {
      PROXY_PORT: "15101",
      MESH_SERVICE_CIDR: "*",
      PATH: Deno.env.get("PATH") ?? "",
    });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.match(fromEnv.stdout, /-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15101/);
    const bad = await inNamespace(`${agent} mesh-iptables --dry-run -p 99999`, {
      PATH: Deno.env.get("PATH") ?? "",
    });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Error: Invalid --envoy-port "99999"/);
  },
);
