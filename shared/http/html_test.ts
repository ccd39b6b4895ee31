import assert from "node:assert/strict";
import {
  CONTENT_SECURITY_POLICY,
  dataTable,
  escapeHtml,
  factList,
  html,
  htmlResponse,
  layout,
} from "./html.ts";
import { lineChart } from "./svg_chart.ts";

Deno.test("html escapes every interpolated value, nested and in arrays, but keeps Html as markup", () => {
  const evil = `<script>alert("x")</script>' &`;
  const page = html`<p title="${evil}">${evil}</p>${[evil, html`<b>${evil}</b>`]}${undefined}${null}`;
  assert.equal(
    page.text,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp;">' +
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp;</p>" +
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp;" +
      "<b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp;</b>",
  );
  assert.equal(escapeHtml("a<b"), "a&lt;b");
});

Deno.test("layout and factList escape titles, links and values; responses carry the strict policy", async () => {
  const page = layout({
    title: "<script>t</script>",
    site: "S",
    nav: [{ href: '/x?a="1"', label: "<i>" }],
    current: '/x?a="1"',
    stylesheet: "/s.css",
    scripts: ["/a.js"],
    body: factList([["<k>", "<v>"]]),
  });
  assert.doesNotMatch(page.text, /<script>t|<i>|<k>|<v>/);
  assert.match(page.text, /<script src="\/a.js" defer><\/script>/);
  assert.match(page.text, /aria-current="page"/);
  assert.match(page.text, /<meta name="viewport"/);
  const response = htmlResponse(page);
  assert.equal(response.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
  assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval|\*/);
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  await response.body?.cancel();
});

Deno.test("lineChart draws a path per series with gaps, and a text alternative that escapes labels", () => {
  const chart = lineChart({
    title: "<t>",
    unit: "ms",
    span: "last minute",
    series: [{ label: "<p50>", className: "s1", values: [0, undefined, 3] }],
  }).text;
  assert.match(chart, /d="M0.0 156.0 l0 0 M600.0 4.0 l0 0"/);
  assert.match(chart, /role="img" aria-label="&lt;t&gt;. &lt;p50&gt;: latest 3.0 ms, highest 3.0 ms"/);
  assert.doesNotMatch(chart, /<t>|<p50>/);
});

Deno.test("dataTable escapes its headers and names the table only when given an id", () => {
  const squeeze = (markup: { text: string }) => markup.text.replace(/\s+/g, " ").replace(/> </g, "><");
  const named = squeeze(dataTable(
    ["<b>", html`<span>ok</span>`],
    html`
      <tr>
        <td>1</td>
      </tr>
    `,
    "t",
  ));
  assert.match(named, /<table id="t" ?>/);
  assert.match(named, /<th scope="col">&lt;b&gt;<\/th><th scope="col"><span>ok<\/span><\/th>/);
  assert.match(named, /<tbody><tr><td>1<\/td><\/tr><\/tbody>/);
  assert.match(squeeze(dataTable(["a"], html``)), /<table ?>/);
});
