import assert from "node:assert/strict";
import { parseResolvConf } from "./resolv_conf.ts";

Deno.test("a resolv.conf name server may name its port", () => {
  const conf = parseResolvConf("nameserver 127.0.0.1:5353\nnameserver [::1]:5354\n");
  assert.deepEqual(conf.servers, ["127.0.0.1:5353", "[::1]:5354"]);
});

Deno.test("resolv.conf gives its name servers on port 53 and its last search line", () => {
  const conf = parseResolvConf(
    "# generated\nnameserver 10.96.0.10\nnameserver fe80::1%eth0 ; local\ndomain old.example\n" +
      "search shop.svc.cluster.local svc.cluster.local cluster.local.\noptions ndots:5\n",
  );
  assert.deepEqual(conf.servers, ["10.96.0.10:53", "[fe80::1]:53"]);
  assert.deepEqual(conf.search, ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"]);
  assert.deepEqual(parseResolvConf(""), { servers: [], search: [] });
});
