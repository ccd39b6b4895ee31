import assert from "node:assert/strict";
import { AnalysisContext } from "./analyzer.ts";
import { CorpusInput } from "./_corpus_support.ts";
import { ingressGatewayPortAnalyzer } from "./ingress_gateway_port_analyzer.ts";

const options = { rootNamespace: "mesh-system", systemNamespace: "mesh-system" };

Deno.test("The gateway port analyzer matches pods a thousand at a time, each against its own namespace's Services", () => {
  // A selector may match every pod: 100,000 pods and 20,000 Services took 15.8 s in one step of the event loop.
  const input = new CorpusInput();
  for (let i = 0; i < 2_500; i++) {
    input.orchestrator.add({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `p${i}`, namespace: `ns${i % 10}`, labels: { app: `a${i % 10}` } },
      spec: { containers: [{ name: "c" }] },
    } as never);
  }
  // Only ns3's Service selects ns3's pods on 8080; ns4's Service has the same selector but selects its own pods.
  input.orchestrator.add({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "ns3" },
    spec: { selector: { app: "a3" }, ports: [{ port: 8080, protocol: "TCP" }] },
  } as never);
  input.orchestrator.add({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "other", namespace: "ns4" },
    spec: { selector: { app: "a3" }, ports: [{ port: 9090, protocol: "TCP" }] },
  } as never);
  input.addYaml(`
apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata: {name: gw, namespace: ns3}
spec:
  selector: {app: a3}
  servers:
  - {port: {number: 8080, name: http, protocol: HTTP}, hosts: ["*"]}
  - {port: {number: 9090, name: other, protocol: HTTP}, hosts: ["*"]}
`);
  const ctx = new AnalysisContext(input.input(options));
  const steps = [...ingressGatewayPortAnalyzer.analyze(ctx)].length;
  assert.equal(steps, 3, "two steps of a thousand pods, and the gateway's own");
  assert.deepEqual(ctx.messages().map((m) => `${m.code} ${m.text}`), [
    "IST0104 The gateway refers to a port that is not exposed on the workload (pod selector app=a3; port 9090)",
  ]);
});
