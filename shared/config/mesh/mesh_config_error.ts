/** A mesh config or mesh networks file that cannot be used; `issues` lists every problem as `file:line: …`. */
export class MeshConfigError extends Error {
  /** Path of the file, as given. */
  readonly file: string;
  /** Every problem, each as `file:line: field.path: message`; at least one. */
  readonly issues: readonly string[];

  /** The message names `file` and joins `issues` with `; `. */
  constructor(file: string, issues: readonly string[], options?: ErrorOptions) {
    super(`Invalid config file "${file}": ${issues.join("; ")}`, options);
    this.name = "MeshConfigError";
    this.file = file;
    this.issues = issues;
  }
}
