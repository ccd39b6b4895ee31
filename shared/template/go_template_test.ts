import assert from "node:assert/strict";
import { parseGoTemplate, TemplateError } from "./go_template.ts";

const render = (template: string, data: unknown) => parseGoTemplate("test.tmpl", template)(data);

Deno.test("Go templates: fields, variables, literals and pipelines into functions", () => {
  const data = { name: "app", node: { id: "n1" }, meta: { a: 1 }, port: 15000, list: ["x", "y"] };
  assert.equal(render(`{{ .name }}/{{ .node.id }}/{{ $.port }}`, data), "app/n1/15000");
  assert.equal(render(`{{ toJSON .meta }} {{ .meta | toJSON }}`, data), `{"a":1} {"a":1}`);
  assert.equal(render(`{{ printf "%s:%d %q" .name .port "q" }}`, data), `app:15000 "q"`);
  assert.equal(render(`{{ $p := .port }}{{ $p }}`, data), "15000");
  assert.equal(
    render(`{{ index .meta "a" }} {{ len .list }} {{ default "none" .missing }}`, data),
    "1 2 none",
  );
  assert.equal(render(`{{ (printf "%s" .name) | print }}`, data), "app");
  assert.equal(render("a\n  {{- .name -}}  \nb {{/* a comment */}}c", data), "aappb c");
  assert.equal(render("a\t{{-\t.name\t-}}\tb", data), "aappb", "any white space after the trim dash");
});

Deno.test("Go templates: js, toJSON and toJson as Istio's templates use them, print as Go spaces it", () => {
  const data = { re: `a'b"c\\d<e>&=`, meta: { a: [1] } };
  assert.equal(render(`{{ js .re }}`, data), `a\\'b\\"c\\\\d\\u003Ce\\u003E\\u0026\\u003D`);
  assert.equal(
    render(`{{ toJSON .meta }} {{ toJSON .missing }}`, data),
    `{"a":[1]} {}`,
    "Istio's: nil is {}",
  );
  assert.equal(
    render(`{{ toJson .meta }} {{ toJson .missing }}`, data),
    `{"a":[1]} null`,
    "sprig's: nil is null",
  );
  assert.equal(render(`{{ print 1 2 "a" 3 "b" }}`, data), "1 2a3b", "a space only between two non-strings");
});

Deno.test("Go templates: if/else if/else, range with variables and else, with", () => {
  const data = { on: true, off: false, zero: 0, empty: [], items: ["a", "b", "c"], m: { b: 2, a: 1 } };
  assert.equal(render(`{{ if .off }}1{{ else if .on }}2{{ else }}3{{ end }}`, data), "2");
  assert.equal(render(`{{ if or .zero .empty }}t{{ else }}f{{ end }}`, data), "f");
  assert.equal(
    render(`{{ if eq .zero 0 1 }}eq{{ end }}{{ if and .on (not .off) }}and{{ end }}`, data),
    "eqand",
  );
  assert.equal(
    render(`{{ range $i, $v := .items }}{{ if $i }},{{ end }}"{{ $v }}"{{ end }}`, data),
    `"a","b","c"`,
  );
  assert.equal(render(`{{ range .empty }}x{{ else }}none{{ end }}`, data), "none");
  assert.equal(
    render(`{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}`, data),
    "a=1;b=2;",
    "keys sorted",
  );
  assert.equal(
    render(`{{ with .m }}{{ .a }}{{ else }}-{{ end }}{{ with .empty }}x{{ else }}-{{ end }}`, data),
    "1-",
  );
  assert.equal(render(`{{ range .items }}{{ . }}{{ $.on }}{{ end }}`, data), "atruebtruectrue");
});

Deno.test("Go templates: what is wrong is named with the template and line", () => {
  const fails = (template: string, message: RegExp) =>
    assert.throws(
      () => render(template, { a: 1 }),
      (e: Error) => e instanceof TemplateError && message.test(e.message),
    );
  fails("line1\n{{ if .a }}", /^test\.tmpl:2: missing \{\{ end \}\}/);
  fails("{{ end }}", /test\.tmpl:1: \{\{ end \}\} without an if, range or with/);
  fails("\n\n{{ .missing }}", /^test\.tmpl:3: \.missing is missing; the fields there are a$/);
  fails("{{ $.a.b.c }}", /^test\.tmpl:1: \$\.a\.b\.c is missing$/);
  fails("{{ nosuch .a }}", /unknown function "nosuch"; the functions are and, default, eq, /);
  fails("{{ if false }}\n{{ nosuch }}{{ end }}", /^test\.tmpl:2: unknown function "nosuch"/);
  fails("{{ if .a }}x\n{{ else if ) }}y{{ end }}", /^test\.tmpl:2: /);
  fails('\n{{ printf "%d" "x" }}', /^test\.tmpl:2: printf: "%d" wants an integer, got string "x"$/);
  fails("{{ .a", /unclosed action/);
  fails('{{ template "x" }}', /\{\{ template \}\} is not supported/);
});

Deno.test("Go templates: assignment reaches the declaring scope, fields holding functions are called", () => {
  const template =
    `{{ $n := list }}{{ range .items }}{{ if ne . "skip" }}{{ $n = append $n . }}{{ end }}{{ end }}` +
    `{{ len $n }} {{ .box.GetValue }} {{ .mode }}`;
  const list = (...a: unknown[]) => a;
  const append = (l: unknown[], v: unknown) => [...l, v];
  const data = { items: ["a", "skip", "b"], box: { GetValue: () => 7 }, mode: { String: () => "REDIRECT" } };
  const out = parseGoTemplate("t", template, { functions: { list, append } })(data);
  assert.equal(out, "2 7 REDIRECT");
  assert.throws(() => parseGoTemplate("t", "{{ $x = 1 }}")({}), /t:1: undefined variable \$x/);
});

Deno.test("Go templates: with missingValue a missing value prints as Go's <no value>", () => {
  assert.equal(parseGoTemplate("t", "[{{ .a.b }}]", { missingValue: "<no value>" })({}), "[<no value>]");
});

Deno.test("Go templates: }} inside a quoted string or a comment does not end the action", () => {
  assert.equal(
    parseGoTemplate("t", '{{ "a }} b" }}|{{ `c }}` }}|{{/* "x }} */}}|{{ .v }}')({ v: 1 }),
    "a }} b|c }}||1",
  );
  assert.throws(() => parseGoTemplate("t", '{{ "\\x" }}'), /t:1: cannot read the string/);
});
