// Conformance of the configuration analyzers with the reference's own analyzer test table
// (tests/fixtures/analysis/: Istio 1.9.9's `testGrid`, renamed): every case runs its one analyzer over the
// default ingress objects and its input files, and the produced (code, resource) pairs must equal the
// expected ones as a multiset, as the reference's test compares them.
import assert from "node:assert/strict";
import { parse } from "yaml";
import { allAnalyzers, runnableAnalyzers } from "../discovery/analysis/all_analyzers.ts";
import { analyzeNow } from "../discovery/analysis/analysis_runner.ts";
import { friendlyName, MESSAGES } from "../discovery/analysis/analysis_message.ts";
import { KNOWN_ANNOTATIONS } from "../discovery/analysis/known_annotations.ts";
import { CorpusInput } from "../discovery/analysis/_corpus_support.ts";
import { validateSidecarAnnotations } from "../discovery/inject/annotation_validation.ts";

const FIXTURES = new URL("./fixtures/analysis/", import.meta.url);
const read = (path: string) => Deno.readTextFileSync(new URL(path, FIXTURES));

interface Expected {
  readonly code: string;
  readonly resource: string;
}

interface Case {
  readonly name: string;
  readonly analyzer: string;
  readonly inputFiles: readonly string[];
  readonly defaultResources: readonly string[];
  readonly meshNetworksFile: string | null;
  readonly expected: readonly Expected[];
}

const corpus = JSON.parse(read("cases.json")) as {
  environment: { controlPlaneNamespace: string; meshConfig: { rootNamespace: string } };
  cases: Case[];
};

/** Cases that do not pass, with the reason; a case not run counts as failed. None today. */
const KNOWN_FAILURES: Readonly<Record<string, string>> = {};

function validateAnnotation(name: string, value: string): string | undefined {
  try {
    validateSidecarAnnotations({ [name]: value });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const analyzers = allAnalyzers({ validateAnnotation });

function runCase(c: Case): string[] {
  const loaded = new CorpusInput();
  for (const file of [...c.defaultResources, ...c.inputFiles]) loaded.addYaml(read(file));
  const analyzer = analyzers.find((a) => a.name === c.analyzer);
  assert.ok(analyzer, `no analyzer named "${c.analyzer}"`);
  const input = loaded.input({
    rootNamespace: corpus.environment.meshConfig.rootNamespace,
    systemNamespace: corpus.environment.controlPlaneNamespace,
    ...(c.meshNetworksFile ? { meshNetworks: parse(read(c.meshNetworksFile)) } : {}),
  });
  return analyzeNow(input, [analyzer]).map((m) => `${m.code} ${friendlyName(m.origin)}`).sort();
}

Deno.test("the analysis corpus holds the reference's 35 cases and 96 expected messages", () => {
  assert.equal(corpus.cases.length, 35);
  assert.equal(corpus.cases.reduce((n, c) => n + c.expected.length, 0), 96);
});

Deno.test("every analyzer of the reference is built, under its reference name", () => {
  const names = new Set(corpus.cases.map((c) => c.analyzer));
  // As in the reference's test, the schema analyzers (one per kind) are not in the table.
  const tabled = analyzers.filter((a) => !a.name.startsWith("schema.ValidationAnalyzer."));
  assert.deepEqual([...names].sort(), tabled.map((a) => a.name).sort());
});

for (const c of corpus.cases) {
  const reason = KNOWN_FAILURES[c.name];
  Deno.test({
    name: `analysis case "${c.name}" (${c.analyzer}) gives exactly the reference's messages`,
    ignore: reason !== undefined,
    fn() {
      const want = c.expected.map((e) => `${e.code} ${e.resource}`).sort();
      assert.deepEqual(runCase(c), want);
    },
  });
}

for (const c of corpus.cases) {
  const analyzer = analyzers.find((a) => a.name === c.analyzer);
  if (!analyzer || analyzer.requiresOrchestrator) continue;
  Deno.test(`analysis case "${c.name}" gives the same messages in file mode, without orchestrator objects`, () => {
    const loaded = new CorpusInput();
    for (const file of [...c.defaultResources, ...c.inputFiles]) loaded.addYaml(read(file));
    const input = loaded.input({
      rootNamespace: corpus.environment.meshConfig.rootNamespace,
      systemNamespace: corpus.environment.controlPlaneNamespace,
      withOrchestrator: false,
      ...(c.meshNetworksFile ? { meshNetworks: parse(read(c.meshNetworksFile)) } : {}),
    });
    const got = analyzeNow(input, runnableAnalyzers(analyzers, false).filter((a) => a === analyzer));
    assert.deepEqual(got.map((m) => `${m.code} ${friendlyName(m.origin)}`).sort(), runCase(c));
  });
}

Deno.test("the message catalogue has the reference's codes, levels and texts", () => {
  const catalogue = parse(read("messages.yaml")) as {
    messages: { name: string; code: string; level: string; template: string }[];
  };
  for (const type of Object.values(MESSAGES)) {
    const ref = catalogue.messages.find((m) => m.name === type.name);
    assert.ok(ref, `${type.name} is not in the catalogue`);
    assert.deepEqual({ code: type.code, level: type.level, template: type.template }, {
      code: ref.code,
      level: ref.level,
      template: ref.template,
    });
  }
});

Deno.test("the annotation table is the reference's", () => {
  const table = parse(read("reference/annotations.yaml")) as {
    annotations: { name: string; deprecated?: boolean; resources: string[] }[];
  };
  assert.deepEqual(
    [...KNOWN_ANNOTATIONS].map(([name, a]) => ({
      name,
      deprecated: a.deprecated ?? false,
      resources: a.resources,
    })),
    table.annotations.map((a) => ({
      name: a.name,
      deprecated: a.deprecated ?? false,
      resources: a.resources,
    })),
  );
});
