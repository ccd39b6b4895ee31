import assert from "node:assert/strict";
import { parseGoTemplate } from "@mesh/shared/template/go_template";
import { goView, stringMap } from "./go_view.ts";
import { canonicalQuantity } from "./quantity.ts";
import { injectionFunctions, MAX_APPENDED_ITEMS } from "./template_functions.ts";
import { parseInjectorConfig } from "./inject_config.ts";

const render = (template: string, data: unknown, env: Record<string, string> = {}) =>
  parseGoTemplate("t", template, { functions: injectionFunctions(env), missingValue: "<no value>" })(data);

Deno.test("Injection template functions behave as the reference's Go functions", () => {
  const meta = goView({ annotations: { a: "1" } }, { Annotations: stringMap({ a: "1" }) });
  assert.equal(render("{{ annotation .m `a` 9 }},{{ annotation .m `b` 9 }}", { m: meta }), "1,9");
  assert.equal(
    render("{{ isset .m.Annotations `a` }} {{ isset .m.Annotations `b` }}", { m: meta }),
    "true false",
  );
  assert.equal(
    render('{{ excludeInboundPort 15020 "" }}|{{ excludeInboundPort 15020 "1, 2" }}', {}),
    "15020|1,2,15020",
  );
  assert.equal(render('{{ excludeInboundPort "0" "4" }}|{{ excludeInboundPort 4 "4,5" }}', {}), "4|4,5");
  assert.equal(
    render('{{ valueOrDefault "" "d" }}{{ valueOrDefault .x "e" }}{{ valueOrDefault "v" "f" }}', {}),
    "dev",
  );
  assert.equal(render('{{ contains "/" "a/b" }} {{ contains "/" "ab" }}', {}), "true false");
  assert.equal(render("{{ toJSON .m }}|{{ toJSON .n }}", { m: { b: "2", a: "1" } }), '{"a":"1","b":"2"}|{}');
  assert.equal(render('{{ index (fromJSON `{"k":1}`) "k" }}|{{ fromJSON `nope` }}', {}), "1|{}");
  assert.equal(
    render("a:\n  {{ toYaml .v | indent 2 }}", { v: { z: 1, a: [1] } }),
    "a:\n  a:\n    - 1\n  z: 1\n  ",
  );
  assert.equal(render("{{ directory `/etc/certs/ca.pem` }}", {}), "/etc/certs/");
  assert.equal(render('{{ env "X" "d" }}{{ env "Y" "d" }}', {}, { X: "x" }), "xd");
  assert.equal(
    render('{{ appendMultusNetwork "" "cni" }}|{{ appendMultusNetwork "a, b" "cni" }}', {}),
    "cni|a, b, cni",
  );
  assert.equal(
    render('{{ appendMultusNetwork `[{"name":"a"}]` "cni" }}', {}),
    '[{"name":"a"}, {"name": "cni"}]',
  );
  const containers = goView([
    { name: "app", ports: [{ containerPort: 80 }, { containerPort: 53, protocol: "UDP" }] },
    { name: "mesh-proxy", ports: [{ containerPort: 15090 }] },
  ]);
  assert.equal(
    render("{{ includeInboundPorts .c }}|{{ applicationPorts .c }}", { c: containers }),
    "80,15090|80",
  );
  assert.equal(
    render("{{ range .c }}{{ range .Ports }}{{ structToJSON . }};{{ end }}{{ end }}", { c: containers }),
    '{"containerPort":80};{"containerPort":53,"protocol":"UDP"};{"containerPort":15090};',
  );
  assert.equal(
    render('{{ list "a" "b" | join "," }} {{ quote "x" }} {{ .missing }}', {}),
    'a,b "x" <no value>',
  );
  assert.equal(render('{{ omit (strdict "a" 1 "b" 2) "a" | toJSON }}', {}), '{"b":"2"}');
});

Deno.test("Quantities are written in the orchestrator's canonical form", () => {
  const cases: [string, string][] = [
    ["2000m", "2"],
    ["100m", "100m"],
    ["1024Mi", "1Gi"],
    ["128Mi", "128Mi"],
    [
      "0.5",
      "500m",
    ],
    ["1000", "1k"],
    ["1.5Gi", "1.5Gi"],
  ];
  for (const [input, want] of cases) assert.equal(canonicalQuantity(input), want, input);
});

Deno.test("Quantities with a megabyte of fraction digits are read in one pass: trailing zeros dropped, the rest kept as written", () => {
  // A pod's own quantity reaches this; `replace(/0+$/)` took 1.2 s of the event loop at 60,000 zeros.
  const zeros = "0".repeat(1024 * 1024);
  assert.equal(
    canonicalQuantity(`0.${zeros}1`),
    `0.${zeros}1`,
    "more digits than a quantity holds: as written",
  );
  assert.equal(canonicalQuantity(`0.25${zeros}`), "250m");
  assert.equal(canonicalQuantity(`3.${zeros}`), "3");
});

Deno.test("directory is everything up to the last slash, as Go's path.Split, whatever the path's length", () => {
  assert.deepEqual(
    ["/etc/certs/ca.pem", "ca.pem", "/etc/certs/", "/", ""].map((p) => render("{{ directory .p }}", { p })),
    ["/etc/certs/", "", "/etc/certs/", "/", ""],
  );
  // The path may come from a pod's proxy config annotation; `replace(/[^/]*$/)` was quadratic in a long segment.
  const segment = "a".repeat(1024 * 1024);
  assert.equal(render("{{ directory .p }}", { p: `${segment}/` }).length, segment.length + 1);
});

Deno.test("render renders text from the values with the data of the running template", () => {
  const config = parseInjectorConfig(
    "templates:\n  sidecar: '{{ render .Values.text }}|{{ render \"{{ nosuch }}\" }}'\n",
    "config",
    {},
  );
  assert.equal(config.templates.sidecar({ Values: { text: "{{ .Values.name }}", name: "hi" } }), "hi|");
});

Deno.test("append builds a list of up to 10,000 items in a loop, and refuses to go past it", () => {
  // It copies the list each time, as sprig's does: a loop over 50,000 containers took 8.5 s of the worker.
  const loop = "{{ $l := list }}{{ range .items }}{{ $l = append $l . }}{{ end }}{{ len $l }}";
  const items = (n: number) => ({ items: Array.from({ length: n }, (_, i) => i) });
  assert.equal(render(loop, items(MAX_APPENDED_ITEMS)), "10000");
  assert.throws(() => render(loop, items(MAX_APPENDED_ITEMS + 1)), {
    message: /append: the list already has 10000 items, as many as a template may build \(10000\)/,
  });
});
