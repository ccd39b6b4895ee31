import assert from "node:assert/strict";
import { AnalysisContext } from "./analyzer.ts";
import { CorpusInput } from "./_corpus_support.ts";
import { regexAnalyzer } from "./regex_analyzer.ts";

const options = { rootNamespace: "mesh-system", systemNamespace: "mesh-system" };

Deno.test("The regex analyzer checks one route's regexes a step at a time, so a VirtualService of thousands never holds the loop whole", () => {
  const regexes = ["^/a/[0-9]+$", "(?i)^/b", "^/c/(unclosed"];
  const input = new CorpusInput().addYaml(`
apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata: {name: routes, namespace: default}
spec:
  hosts: [a.example.com]
  http:
${regexes.map((r) => `  - match: [{uri: {regex: "${r}"}}]\n    route: [{destination: {host: a}}]`).join("\n")}
`).input(options);
  const ctx = new AnalysisContext(input);
  const steps = [...regexAnalyzer.analyze(ctx)].length;
  assert.equal(steps, regexes.length + 1, "a step per route, and the resource's own");
  assert.deepEqual(ctx.messages().map((m) => `${m.code} ${m.text}`), [
    'IST0122 Field "uri" regular expression invalid: "^/c/(unclosed" (invalid RE2 regex "^/c/(unclosed": ' +
    "missing ): ^/c/(unclosed; see https://github.com/google/re2/wiki/Syntax)",
  ]);
});
