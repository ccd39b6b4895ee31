/**
 * Test program run by `dns_capture_netns_test.ts` inside a private network namespace (`unshare -n`), as root:
 * starts the DNS proxy on its real port (15053, 127.0.0.1 and ::1) with a fake upstream on a port other than
 * 53, applies the capture rules of `mesh-iptables` with `MESH_META_DNS_CAPTURE`, and asks a name server on
 * port 53 as the workload would, over UDP and TCP. The rules capture IPv4 DNS only, as Istio 1.9's (its
 * `DNSServersV4`). Prints a JSON summary.
 */
import net from "node:net";
import { Metrics } from "@mesh/shared/metrics/metrics";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { iptablesConfigFromFlags } from "../iptables/config.ts";
import { denoCommandExecutor } from "../iptables/executor.ts";
import { applyIptables, cleanIptables, type RunnerDeps } from "../iptables/runner.ts";
import { decodeDnsMessage } from "./dns_message.ts";
import { DnsProxy } from "./dns_proxy.ts";
import { tcpFrame, TcpFrameReader } from "./tcp_frames.ts";
import { addressesOf, dnsQuery, DnsTestClient, fakeUpstream } from "./_test_dns.ts";

const upstream = await fakeUpstream();
const proxy = new DnsProxy({
  scope: { namespace: "shop", domain: "shop.svc.cluster.local", search: ["shop.svc.cluster.local"] },
  upstreams: [upstream.address],
  log: new RecordingLogger(),
  metrics: new Metrics("agent", { version: "test", tag: "test" }),
});
proxy.updateTable({
  "db.example.com": { ips: ["10.20.0.1"], registry: "External", shortname: "", namespace: "" },
});
await proxy.start();
const deps: RunnerDeps = {
  exec: denoCommandExecutor(),
  logger: new RecordingLogger(),
  print: () => {},
  identity: { uid: Deno.uid()!, gid: Deno.gid()! },
};
const config = iptablesConfigFromFlags({ "proxy-uid": "1337", "proxy-gid": "1337" }, {
  MESH_META_DNS_CAPTURE: true,
});
await applyIptables(config, deps);

const v4 = new DnsTestClient("udp4");
const tcpAnswer = () =>
  new Promise<unknown[]>((resolve, reject) => {
    const socket = net.connect({ host: "10.96.0.10", port: 53 });
    const frames = new TcpFrameReader();
    socket.on("connect", () => socket.write(tcpFrame(dnsQuery("db.example.com.", 3))));
    socket.on("data", (chunk: Uint8Array) => {
      for (const message of frames.push(chunk)) {
        resolve(addressesOf(decodeDnsMessage(message)));
        socket.destroy();
      }
    });
    socket.on("error", reject);
  });
try {
  const summary = {
    udp4: addressesOf(await v4.ask(dnsQuery("db.example.com.", 1), 53, "10.96.0.10")),
    tcp: await tcpAnswer(),
    outside: addressesOf(await v4.ask(dnsQuery("www.outside.test.", 4), 53, "10.96.0.10")),
    upstreamSaw: upstream.seen,
  };
  await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(summary) + "\n"));
} finally {
  v4.close();
  await cleanIptables(config, deps);
  await proxy.close();
  upstream.close();
}
