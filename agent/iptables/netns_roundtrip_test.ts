import assert from "node:assert/strict";
import { assertNetnsOk, runInNetns } from "./_test_support.ts";
import { IPROUTE2, IPTABLES, needs, NETNS } from "@mesh/shared/testing/system_tools";

const SCRIPT = new URL("./_netns_roundtrip.ts", import.meta.url).pathname;

/** The child's permissions: exactly the tools the runner calls and the addresses the probe uses. */
const CHILD_PERMISSIONS = [
  "--allow-run=iptables-restore,ip6tables-restore,iptables-save,ip6tables-save,ip",
  "--allow-net=0.0.0.0,127.0.0.1,127.0.0.6,10.96.0.1,192.0.2.1",
  "--allow-sys=uid,gid",
];

/** A veth pair with a default route, so service addresses are routable as in a pod; nothing answers on it. */
const NETWORK = "ip link add v0 type veth peer name v1 && ip addr add 10.1.0.2/16 dev v0 && " +
  "ip link set v0 up && ip link set v1 up && ip route add default dev v0";

/** Points `iptables-restore` & co. at the legacy backend through a PATH shim, removed afterwards. */
const LEGACY_SHIM = `command -v iptables-legacy-restore >/dev/null || ` +
  `{ echo 'iptables-legacy-restore is not installed (Debian package "iptables")' >&2; exit 9; }; ` +
  `d=$(mktemp -d) && for t in iptables ip6tables; do for s in restore save; do ` +
  `ln -s "$(command -v $t-legacy-$s)" "$d/$t-$s"; done; done && export PATH="$d:$PATH"`;

function quote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

async function roundTrip(scenario: string, legacy = false) {
  const deno = [Deno.execPath(), "run", "--quiet", ...CHILD_PERMISSIONS, SCRIPT, scenario].map(quote).join(
    " ",
  );
  const script = legacy
    ? `${NETWORK} && ${LEGACY_SHIM} && ${deno}; rc=$?; rm -rf "$d"; exit $rc`
    : `${NETWORK} && ${deno}`;
  const result = await runInNetns(script);
  assertNetnsOk(result, `Round trip "${scenario}"`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
}

Deno.test(
  "Rules applied in a namespace capture traffic, re-apply idempotently and clean up completely",
  needs(NETNS, IPTABLES, IPROUTE2),
  async (t) => {
    await t.step("outbound capture via a service CIDR address (nft backend)", async () => {
      const summary = await roundTrip("outbound");
      assert.equal(summary.backend, "nft");
      assert.equal(summary.arrivedAt, 15001);
      assert.equal(summary.target.hostname, "10.96.0.1");
      assert.match(
        summary.failureBefore,
        /no probe connection to 10\.96\.0\.1:15002 reached the redirect targets/,
      );
      assert.match(summary.failureAfter, /traffic is not captured/);
    });
    await t.step("the same with the legacy backend", async () => {
      const summary = await roundTrip("outbound-legacy", true);
      assert.equal(summary.backend, "legacy");
      assert.equal(summary.arrivedAt, 15001);
    });
    await t.step("loopback capture of the proxy uid via 127.0.0.6", async () => {
      const summary = await roundTrip("loopback");
      assert.equal(summary.arrivedAt, 15006);
      assert.equal(summary.target.hostname, "127.0.0.6");
      assert.match(summary.failureBefore, /reached port 15002 directly/);
    });
    await t.step("TPROXY with IPv6 and DNS capture, including ip rule, route and ::6", async () => {
      const summary = await roundTrip("tproxy-ipv6-dns");
      assert.equal(summary.arrivedAt, 15001);
      assert.equal(summary.target.hostname, "192.0.2.1");
    });
  },
);
