/**
 * The stylesheet of the operator pages, served as a file (the Content-Security-Policy allows no inline
 * style). System fonts only; colours chosen for at least 4.5:1 contrast in light and dark schemes; tables
 * scroll sideways on a phone instead of widening the page.
 *
 * @module
 */

/** CSS of every operator page. */
export const PAGE_STYLE = `:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #ffffff; --muted: #4a4a4a;
  --line: #c8c8c8; --link: #0b57d0; --bad: #b3261e; --good: #146c2e; --warn: #8a5300; --row: #f3f4f6; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececec; --bg: #161616; --muted: #b8b8b8; --line: #4a4a4a;
  --link: #8ab4f8; --bad: #f2b8b5; --good: #8fd19e; --warn: #f5c26b; --row: #222222; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); }
header { border-bottom: 1px solid var(--line); padding: 0.5rem 1rem; }
header .site { margin: 0; font-weight: 600; }
nav ul { list-style: none; margin: 0.25rem 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; }
a { color: var(--link); }
a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--fg); }
main { padding: 0 1rem 2rem; max-width: 72rem; }
h1 { font-size: 1.5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); }
tbody tr:nth-child(even) { background: var(--row); }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.9em; }
pre { white-space: pre-wrap; word-break: break-all; }
main > p, main > ol li { overflow-wrap: anywhere; }
td, th { overflow-wrap: break-word; }
td ul { margin: 0; padding-left: 1rem; }
th .muted { font-weight: normal; }
.nack { overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.bad { color: var(--bad); }
.good { color: var(--good); }
.warn { color: var(--warn); }
.status { min-height: 1.5em; font-weight: 600; }
label { font-weight: 600; }
select, input, button { font: inherit; padding: 0.2rem 0.4rem; }
button { cursor: pointer; }
:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
.chart { margin: 1rem 0; }
.chart svg { width: 100%; height: 10rem; border: 1px solid var(--line); }
.chart .axis { stroke: var(--line); }
.chart .s1 { stroke: var(--link); } .chart .s2 { stroke: var(--warn); } .chart .s3 { stroke: var(--bad); }
.key::before { content: "\\25A0 "; } .key.s1::before { color: var(--link); } .key.s2::before { color: var(--warn); }
.key.s3::before { color: var(--bad); }
.metric-line { display: block; } .metric-line[hidden] { display: none; }
form.inline { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
`;
