import assert from "node:assert/strict";
import { LineCounter, parseAllDocuments } from "yaml";
import { formatIssue } from "./validation/report.ts";
import { parseResource } from "./validate_resource.ts";
import { KINDS } from "./kinds.ts";
import { yamlLineResolver } from "./validation/yaml_lines.ts";

/** Istio 1.9.9's validation dataset (provenance and licence: tests/fixtures/istio-1.9-validation/README.md). */
const CORPUS = new URL("../../tests/fixtures/istio-1.9-validation/", import.meta.url);
/** `<group>-<version>-<Kind>[-<variant>]-<valid|invalid>.yaml`; every document of a file has that validity. */
const FILE = /^(networking|security)-(v\w+)-([A-Za-z]+)(?:-[\w-]+?)?-(valid|invalid)\.yaml$/;
/** The `yaml` package reads these debug switches while parsing; without env access Deno throws. */
const YAML_ENV = ["LOG_TOKENS", "LOG_STREAM"];

interface CorpusDoc {
  readonly label: string;
  readonly kind: string;
  readonly expectValid: boolean;
  readonly doc: unknown;
  readonly line: number;
  readonly file: string;
  readonly lineOf: (path: string) => number | undefined;
}

function corpusFiles(): string[] {
  try {
    return [...Deno.readDirSync(CORPUS)].map((e) => e.name).filter((n) => n.endsWith(".yaml")).sort();
  } catch (err) {
    throw new Error(
      `Conformance corpus not found at "${CORPUS.pathname}": it ships with the repository in ` +
        `tests/fixtures/istio-1.9-validation; run with --allow-read`,
      { cause: err },
    );
  }
}

function loadCorpus(): CorpusDoc[] {
  for (const variable of YAML_ENV) {
    if (Deno.permissions.querySync({ name: "env", variable }).state !== "granted") {
      throw new Error(
        `The YAML parser needs env access to "${variable}": run with --allow-env=${YAML_ENV.join(",")}`,
      );
    }
  }
  const files = corpusFiles();
  assert.ok(files.length > 0, `No *.yaml files in the conformance corpus at "${CORPUS.pathname}"`);
  const docs: CorpusDoc[] = [];
  for (const file of files) {
    const m = FILE.exec(file);
    assert.ok(m, `${file}: name does not follow <group>-<version>-<Kind>-<valid|invalid>.yaml`);
    const text = Deno.readTextFileSync(new URL(file, CORPUS));
    const lineCounter = new LineCounter();
    const parsed = parseAllDocuments(text, { lineCounter });
    assert.ok(Array.isArray(parsed), `${file}: not a YAML stream`);
    for (const [i, doc] of parsed.entries()) {
      assert.equal(doc.errors.length, 0, `${file} document ${i}: YAML errors ${doc.errors.join("; ")}`);
      const value = doc.toJS();
      if (value === null || value === undefined) continue;
      const line = lineCounter.linePos(doc.range[0]).line;
      const lineOf = yamlLineResolver(doc, lineCounter);
      docs.push({
        label: `${file}:${line}`,
        kind: m[3],
        expectValid: m[4] === "valid",
        doc: value,
        line,
        file,
        lineOf,
      });
    }
  }
  return docs;
}

Deno.test("Validation agrees with Istio 1.9's validation dataset for every kind", async (t) => {
  const docs = loadCorpus();
  for (const { kind } of KINDS) {
    assert.ok(docs.some((d) => d.kind === kind && d.expectValid), `no valid ${kind} document in the corpus`);
    assert.ok(
      docs.some((d) => d.kind === kind && !d.expectValid),
      `no invalid ${kind} document in the corpus`,
    );
  }
  for (const doc of docs) {
    await t.step(`${doc.label} is ${doc.expectValid ? "accepted" : "rejected"}`, () => {
      const { resource, report } = parseResource(doc.doc, { file: doc.file, line: doc.line }, {
        lineOf: doc.lineOf,
      });
      const errors = report.errors.map(formatIssue);
      if (doc.expectValid) {
        assert.deepEqual(errors, [], `${doc.label} must be valid`);
        assert.equal(resource?.gvk.kind, doc.kind);
        assert.match(resource?.gvk.group ?? "", /^(networking|security)\.mesh\.io$/);
      } else {
        assert.equal(resource, undefined, `${doc.label} must be rejected`);
        // The rejection must come from the kind's rules, not from an envelope the test failed to build.
        assert.ok(
          report.errors.some((e) =>
            e.path === "spec" || e.path.startsWith("spec.") || e.path === "metadata.name"
          ),
          `${doc.label} was rejected for the wrong reason: ${errors.join("; ")}`,
        );
        assert.ok(
          report.errors.every((e) => e.line !== undefined && e.line >= doc.line),
          `${doc.label}: lines ${errors}`,
        );
      }
    });
  }
});
