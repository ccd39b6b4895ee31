import { dataTable, type Html, html } from "@mesh/shared/http/html";
import { LEVELS } from "@mesh/shared/log/levels";
import { ctrlzPage } from "./ctrlz_layout.ts";

/** One log scope as `/scopej/` shows it. */
export interface ScopeView {
  readonly name: string;
  readonly output_level: string;
  readonly stack_trace_level: string;
  readonly log_callers: boolean;
}

/**
 * Logging scopes: one form a scope, its output level, stack-trace level and caller logging. The script sends
 * the form as `PUT /scopej/<scope>` and shows the answer, or the server's refusal, in the status line.
 */
export function scopesPage(scopes: readonly ScopeView[]): Html {
  return ctrlzPage(
    "Logging scopes",
    "/scopez/",
    html`
      <p class="muted">From <a href="/scopej/"><code>/scopej/</code></a>. A change applies at once, to the
      next log line; changing a level needs JavaScript.</p>
      <p class="status" id="scope-status" role="status" aria-live="polite"></p>
      ${dataTable(
        [
          "Scope",
          "Output level",
          "Stack-trace level",
          "Log callers",
          html`<span class="muted">Change</span>`,
        ],
        scopes.map(scopeRow),
      )}
    `,
  );
}

function scopeRow(scope: ScopeView): Html {
  const id = `scope-${scope.name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return html`
    <tr data-scope-row="${scope.name}">
      <th scope="row"><a href="/scopej/${encodeURIComponent(scope.name)}"><code>${scope.name}</code></a></th>
      <td>${levelSelect(
        `${id}-output`,
        "output_level",
        `Output level of ${scope.name}`,
        scope.output_level,
        id,
      )}</td>
      <td>${levelSelect(
        `${id}-stack`,
        "stack_trace_level",
        `Stack-trace level of ${scope.name}`,
        scope.stack_trace_level,
        id,
      )}</td>
      <td><input type="checkbox" id="${id}-callers" name="log_callers" form="${id}"
    aria-label="Log callers of ${scope.name}"${scope.log_callers
      ? html`
        checked
      `
      : ""}></td>
      <td>
        <form id="${id}" class="scope-form"
          data-scope="${scope.name}"><button type="submit">Apply</button></form>
      </td>
    </tr>
  `;
}

function levelSelect(id: string, field: string, label: string, current: string, form: string): Html {
  return html`<select id="${id}" name="${field}" form="${form}" aria-label="${label}">${
    LEVELS.map((level) =>
      level === current
        ? html`<option value="${level}" selected>${level}</option>`
        : html`<option value="${level}">${level}</option>`
    )
  }</select>`;
}
