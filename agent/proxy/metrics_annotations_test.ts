import assert from "node:assert/strict";
import { parseMetricsAnnotations } from "./metrics_annotations.ts";

const STATUS_PORT = 15020;

Deno.test("parseMetricsAnnotations says where the application's metrics are, if they are scraped", async (t) => {
  await t.step("an unset variable scrapes nothing", () => {
    assert.equal(parseMetricsAnnotations("", STATUS_PORT), undefined);
  });

  await t.step('scrape "true" with a path and port scrapes there', () => {
    assert.deepEqual(
      parseMetricsAnnotations('{"scrape":"true","path":"/stats","port":"9090"}', STATUS_PORT),
      { port: 9090, path: "/stats" },
    );
  });

  await t.step("path and port default to /metrics and 80", () => {
    assert.deepEqual(parseMetricsAnnotations('{"scrape":"true"}', STATUS_PORT), {
      port: 80,
      path: "/metrics",
    });
  });

  await t.step('scrape "false" or no scrape field scrapes nothing', () => {
    assert.equal(parseMetricsAnnotations('{"scrape":"false","port":"9090"}', STATUS_PORT), undefined);
    assert.equal(parseMetricsAnnotations('{"port":"9090"}', STATUS_PORT), undefined);
  });

  await t.step("a JSON number is taken as the port", () => {
    assert.deepEqual(parseMetricsAnnotations('{"scrape":"true","port":9090}', STATUS_PORT)?.port, 9090);
  });
});

Deno.test("parseMetricsAnnotations stops startup on bad annotations, naming the variable and field", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "text that is not JSON",
      "scrape=true",
      /^MESH_METRICS_ANNOTATIONS is not valid JSON .*expected an object/,
    ],
    ["a list", "[]", /^MESH_METRICS_ANNOTATIONS is invalid: expected an object .*got \[\]/],
    [
      "an unknown field",
      '{"scrape":"true","scheme":"https"}',
      /has an unknown field "scheme": expected only scrape/,
    ],
    [
      "a scrape that is not true or false",
      '{"scrape":"yes"}',
      /\.scrape is invalid: expected "true" or "false", got "yes"/,
    ],
    [
      "a path without its /",
      '{"scrape":"true","path":"metrics"}',
      /\.path is invalid: expected a URL path starting with \//,
    ],
    [
      "a port that is no number",
      '{"scrape":"true","port":"http"}',
      /\.port is invalid: expected a port number .*got "http"/,
    ],
    [
      "a port out of range",
      '{"scrape":"true","port":"0"}',
      /\.port is invalid: expected a port number from 1 to 65535/,
    ],
    [
      "the status port itself",
      '{"scrape":"true","port":"15020"}',
      /\.port is invalid: expected a port other than the status port 15020, which would scrape itself/,
    ],
  ];
  for (const [what, text, message] of cases) {
    await t.step(what, () => {
      assert.throws(() => parseMetricsAnnotations(text, STATUS_PORT), { message });
    });
  }
});
