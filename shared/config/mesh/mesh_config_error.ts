/** A mesh config or mesh networks file that cannot be used; `issues` lists every problem as `file:line: …`. */
export class MeshConfigError extends Error {
  readonly file: string;
  readonly issues: readonly string[];

  constructor(file: string, issues: readonly string[], options?: ErrorOptions) {
    super(`Invalid config file "${file}": ${issues.join("; ")}`, options);
    this.name = "MeshConfigError";
    this.file = file;
    this.issues = issues;
  }
}
