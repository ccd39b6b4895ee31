import { childPath, type ValidationReport } from "../validation/report.ts";
import { arrayAt, objectAt, stringAt, stringMapAt } from "../validation/fields.ts";
import { checkHeaderOperationName } from "../validation/headers.ts";
import { mapKeyPath } from "../validation/paths.ts";

/** Header changes applied to a request or response. */
export interface HeaderOperations {
  /** Overwrites headers with these values. */
  readonly set?: Readonly<Record<string, string>>;
  /** Appends these values. */
  readonly add?: Readonly<Record<string, string>>;
  /** Removes these headers. */
  readonly remove?: readonly string[];
}

/** Request and response header manipulation of a route or destination. */
export interface Headers {
  /** Changes to the request before it is forwarded. */
  readonly request?: HeaderOperations;
  /** Changes to the response before it is returned. */
  readonly response?: HeaderOperations;
}

function headerOperationsAt(report: ValidationReport, path: string, value: unknown): void {
  const obj = objectAt(report, path, value, ["set", "add", "remove"]);
  if (obj === undefined) return;
  for (const field of ["set", "add"] as const) {
    const map = stringMapAt(report, childPath(path, field), obj[field]) ?? {};
    for (const name of Object.keys(map)) {
      const problem = checkHeaderOperationName(name);
      if (problem) report.error(mapKeyPath(childPath(path, field), name), problem);
    }
  }
  const removePath = childPath(path, "remove");
  for (const [i, raw] of arrayAt(report, removePath, obj.remove).entries()) {
    const name = stringAt(report, childPath(removePath, i), raw);
    const problem = checkHeaderOperationName(name ?? "");
    if (problem) report.error(childPath(removePath, i), problem);
  }
}

/** Validates a Headers block `{ request: {set, add, remove}, response: {...} }`. */
export function headersAt(report: ValidationReport, path: string, value: unknown): Headers | undefined {
  if (value === undefined || value === null) return undefined;
  const obj = objectAt(report, path, value, ["request", "response"]);
  if (obj === undefined) return undefined;
  for (const field of ["request", "response"] as const) {
    if (obj[field] !== undefined && obj[field] !== null) {
      headerOperationsAt(report, childPath(path, field), obj[field]);
    }
  }
  return obj as Headers;
}
