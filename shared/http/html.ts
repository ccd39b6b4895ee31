/**
 * Server-rendered HTML for the operator pages (ControlZ, the debug overview): a tagged template that escapes
 * every interpolated value unless it is already {@link Html}, the page layout, and the response headers with a
 * strict Content-Security-Policy (scripts and styles only as files from the program itself).
 *
 * @module
 */

/** Markup that is already safe: produced by {@link html} or {@link escapeHtml}, never from raw input. */
export class Html {
  /** `text` must be markup whose every value was escaped. */
  constructor(readonly text: string) {}

  /** The markup. */
  toString(): string {
    return this.text;
  }
}

/** Escapes `&`, `<`, `>`, `"` and `'` so that `text` shows as text in an element or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** A value `html` accepts: escaped unless it is {@link Html}; arrays are joined, null and undefined omitted. */
export type HtmlValue = Html | string | number | boolean | bigint | null | undefined | readonly HtmlValue[];

/** A tagged template building {@link Html}: every interpolated value is escaped unless it is `Html`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/**
 * The policy every page is sent with: nothing from other origins, scripts and styles only as files of this
 * server (no inline script or style), no framing, forms and fetches to this origin only.
 */
export const CONTENT_SECURITY_POLICY: string = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers of every page and asset: the policy, no sniffing, no referrer, no caching of live data. */
function pageHeaders(contentType: string): Headers {
  return new Headers({
    "content-type": contentType,
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  });
}

/** An HTML page response. */
export function htmlResponse(page: Html, status = 200): Response {
  return new Response(page.text, { status, headers: pageHeaders("text/html; charset=utf-8") });
}

/** A handler answering a script or stylesheet held as a string, as a file of this server. */
export function assetHandler(text: string, contentType: string): () => Response {
  return () => new Response(text, { headers: pageHeaders(contentType) });
}

/** One link of a page's navigation. */
export interface NavLink {
  /** Where it goes. */
  readonly href: string;
  /** What it says. */
  readonly label: string;
}

/** What {@link layout} puts around a page's content. */
export interface PageLayout {
  /** The document title, also the heading. */
  readonly title: string;
  /** The site's name, before the title in the tab and above the navigation. */
  readonly site: string;
  /** Navigation links; the one whose `href` is `current` is marked as the current page. */
  readonly nav: readonly NavLink[];
  /** `href` of this page in `nav`. */
  readonly current?: string;
  /** Path of the stylesheet (served by {@link assetHandler}). */
  readonly stylesheet: string;
  /** Paths of the scripts to load, deferred. */
  readonly scripts?: readonly string[];
  /** The page's content. */
  readonly body: Html;
}

/** A whole document: language, viewport for phones, stylesheet, navigation, content, deferred scripts. */
export function layout(page: PageLayout): Html {
  const links = page.nav.map((link) =>
    link.href === page.current
      ? html`<li><a href="${link.href}" aria-current="page">${link.label}</a></li>`
      : html`<li><a href="${link.href}">${link.label}</a></li>`
  );
  const scripts = (page.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`);
  return html`
    <!doctype html>
    <html lang="en">
      <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${page.title} · ${page.site}</title>
    <link rel="stylesheet" href="${page.stylesheet}">
    ${scripts}
      </head>
      <body>
        <header>
          <p class="site">${page.site}</p>
          <nav aria-label="${page.site}">
            <ul>${links}</ul>
          </nav>
        </header>
        <main>
    <h1>${page.title}</h1>
    ${page.body}
        </main>
      </body>
    </html>
  `;
}

/** A two-column table of names and values (a definition list), for a page of facts. */
export function factList(facts: readonly (readonly [string, HtmlValue])[]): Html {
  return html`<dl class="facts">${
    facts.map(([name, value]) =>
      html`
        <dt>${name}</dt>
        <dd>${value}</dd>
      `
    )
  }</dl>`;
}

/** A scrollable table with column headers; `rows` are its `<tr>` elements, `id` names it for links and tests. */
export function dataTable(headers: readonly HtmlValue[], rows: HtmlValue, id?: string): Html {
  return html`
    <div class="table-wrap">
      <table${id === undefined ? "" : html`
        id="${id}"
      `}>
        <thead>
          <tr>${headers.map((header) => html`<th scope="col">${header}</th>`)}</tr>
        </thead>
        <tbody>${rows}</tbody>
        </table>
        </div>
  `;
}
