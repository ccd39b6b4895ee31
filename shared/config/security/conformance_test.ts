import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { formatIssue, ValidationReport } from "../validation/report.ts";
import { type SecurityKind, securityKinds } from "./security_kinds.ts";

const CORPUS = new URL("../../../tests/fixtures/istio-1.9-validation/", import.meta.url);
const FILE = /^security-v1beta1-(\w+)-(valid|invalid)\.yaml$/;

/** One document of the corpus with what it must do. */
interface CorpusDoc {
  readonly label: string;
  readonly kind: SecurityKind;
  readonly expectValid: boolean;
  readonly namespace: string;
  readonly name: string;
  readonly spec: unknown;
}

/** The `yaml` package reads these (debug switches) while parsing; without access Deno throws mid-parse. */
const YAML_ENV = ["LOG_TOKENS", "LOG_STREAM"];

function loadCorpus(): CorpusDoc[] {
  for (const variable of YAML_ENV) {
    if (Deno.permissions.querySync({ name: "env", variable }).state !== "granted") {
      throw new Error(
        `The YAML parser needs env access to "${variable}": run with --allow-env=${YAML_ENV.join(",")}`,
      );
    }
  }
  let names: string[];
  try {
    names = [...Deno.readDirSync(CORPUS)].map((e) => e.name).filter((n) => FILE.test(n)).sort();
  } catch (err) {
    throw new Error(
      `Conformance corpus not found at "${CORPUS.pathname}"; expected Istio 1.9's dataset there`,
      {
        cause: err,
      },
    );
  }
  assert.ok(names.length > 0, `No security-v1beta1-*.yaml files in "${CORPUS.pathname}"`);
  const docs: CorpusDoc[] = [];
  for (const file of names) {
    const [, kind, validity] = FILE.exec(file)!;
    assert.ok(kind in securityKinds, `${file}: kind "${kind}" has no validator`);
    const text = Deno.readTextFileSync(new URL(file, CORPUS));
    parseAllDocuments(text).forEach((doc, i) => {
      assert.equal(doc.errors.length, 0, `${file} document ${i}: YAML errors ${doc.errors.join("; ")}`);
      const obj = doc.toJS() as Record<string, unknown> | null;
      if (obj === null) return;
      const meta = (obj.metadata ?? {}) as Record<string, string>;
      assert.match(String(obj.apiVersion), /^security\.(istio|mesh)\.io\/v1beta1$/, `${file} document ${i}`);
      assert.equal(obj.kind, kind, `${file} document ${i}: kind`);
      docs.push({
        label: `${file} #${i} (${meta.name})`,
        kind: kind as SecurityKind,
        expectValid: validity === "valid",
        namespace: meta.namespace ?? "default",
        name: meta.name,
        spec: obj.spec,
      });
    });
  }
  return docs;
}

Deno.test("Security validators agree with Istio 1.9's validation dataset", async (t) => {
  const docs = loadCorpus();
  for (const kind of Object.keys(securityKinds) as SecurityKind[]) {
    assert.ok(docs.some((d) => d.kind === kind && d.expectValid), `no valid ${kind} document in the corpus`);
    assert.ok(
      docs.some((d) => d.kind === kind && !d.expectValid),
      `no invalid ${kind} document in the corpus`,
    );
  }
  for (const doc of docs) {
    await t.step(`${doc.label} is ${doc.expectValid ? "accepted" : "rejected"}`, () => {
      const report = new ValidationReport();
      securityKinds[doc.kind](doc.spec, report, { namespace: doc.namespace, name: doc.name });
      const errors = report.errors.map(formatIssue);
      if (doc.expectValid) assert.deepEqual(errors, [], `${doc.label} must be valid`);
      else assert.ok(errors.length > 0, `${doc.label} must be rejected`);
    });
  }
});
