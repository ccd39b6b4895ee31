import assert from "node:assert/strict";
import { assertNetnsOk, runInNetns } from "../iptables/_test_support.ts";
import { IPROUTE2, IPTABLES, needs, NETNS } from "@mesh/shared/testing/system_tools";
import { UPSTREAM_ANSWER } from "./_test_dns.ts";

const SCRIPT = new URL("./_netns_dns_capture.ts", import.meta.url).pathname;

/**
 * The child's permissions: the tools the iptables runner calls, and the addresses it listens, asks and answers
 * on (a redirected query comes from the pod address, 10.1.0.2).
 */
const CHILD_PERMISSIONS = [
  "--allow-run=iptables-restore,ip6tables-restore,iptables-save,ip6tables-save,ip",
  "--allow-net=0.0.0.0,127.0.0.1,[::1],10.96.0.10,10.1.0.2",
  "--allow-sys=uid,gid",
  "--allow-read",
  "--allow-env",
];

/** A veth pair with a default route, so a name server address off the pod is routable as in a pod. */
const NETWORK = "ip link add v0 type veth peer name v1 && ip addr add 10.1.0.2/16 dev v0 && " +
  "ip link set v0 up && ip link set v1 up && ip route add default dev v0";

function quote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

Deno.test(
  "with DNS capture rules a workload's port-53 queries reach the agent's DNS proxy over UDP and TCP",
  needs(NETNS, IPTABLES, IPROUTE2),
  async () => {
    const deno = [Deno.execPath(), "run", "--quiet", ...CHILD_PERMISSIONS, SCRIPT].map(quote).join(" ");
    const result = await runInNetns(`${NETWORK} && ${deno}`);
    assertNetnsOk(result, "DNS capture in a namespace");
    const summary = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
    assert.deepEqual(summary.udp4, ["10.20.0.1"]);
    assert.deepEqual(summary.tcp, ["10.20.0.1"]);
    assert.deepEqual(summary.outside, [UPSTREAM_ANSWER]);
    assert.deepEqual(summary.upstreamSaw, ["www.outside.test."]);
  },
);
