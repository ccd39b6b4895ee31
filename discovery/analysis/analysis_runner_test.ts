import assert from "node:assert/strict";
import { analyzeNow, SUPPRESS_ANNOTATION } from "./analysis_runner.ts";
import { CorpusInput } from "./_corpus_support.ts";
import { destinationRuleSubsetAnalyzer } from "./destination_rule_subset_analyzer.ts";
import { gatewayReferenceAnalyzer } from "./gateway_reference_analyzer.ts";
import { schemaValidationAnalyzers } from "./schema_validation_analyzer.ts";

const vs = (name: string, annotations = "") => `
apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: ${name}
  namespace: default
${annotations}
spec:
  hosts: [a.example.com]
  gateways: [missing, missing]
  http:
  - route:
    - destination: {host: a, subset: v1}
    - destination: {host: a, subset: v1}
`;

const options = { rootNamespace: "mesh-system", systemNamespace: "mesh-system" };

Deno.test("analysis reports identical messages about one resource once", () => {
  const input = new CorpusInput().addYaml(vs("r")).input(options);
  const messages = analyzeNow(input, [destinationRuleSubsetAnalyzer, gatewayReferenceAnalyzer]);
  assert.deepEqual(messages.map((m) => `${m.code} ${m.text}`), [
    'IST0101 Referenced gateway not found: "missing"',
    'IST0101 Referenced host+subset in destinationrule not found: "a+v1"',
    "IST0132 one or more host [a.example.com] defined in VirtualService default/r not found in Gateway default/missing.",
  ]);
});

Deno.test("analysis drops the codes a resource suppresses with its annotation, or all with *", () => {
  const input = new CorpusInput()
    .addYaml(vs("some", `  annotations: {"${SUPPRESS_ANNOTATION}": "IST0132,IST0999"}`))
    .addYaml(vs("all", `  annotations: {"${SUPPRESS_ANNOTATION}": "*"}`))
    .input(options);
  const messages = analyzeNow(input, [gatewayReferenceAnalyzer]);
  assert.deepEqual(messages.map((m) => `${m.code} ${m.origin.name}`), ["IST0101 some"]);
});

Deno.test("the schema analyzers report a kind's validation warnings as IST0133", () => {
  const input = new CorpusInput().addYaml(`
apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata: {name: reviews, namespace: default}
spec:
  host: reviews
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v1, labels: {version: v2}}
`).input(options);
  const messages = analyzeNow(input, schemaValidationAnalyzers());
  assert.deepEqual(messages.map((m) => `${m.code} ${m.origin.kind} ${m.text}`), [
    'IST0133 DestinationRule Schema validation warning: spec.subsets[1].name: duplicate subset name "v1"; only the ' +
    "first is used",
  ]);
});
