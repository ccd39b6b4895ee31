import { type Issue, ValidationReport } from "../validation/report.ts";
import { MeshConfigError } from "./mesh_config_error.ts";
import { parseYamlDocuments } from "./yaml_documents.ts";

/** A decoded config file and its warnings (each as `file:line: path: message`). */
export interface DecodedFile<T> {
  readonly value: T;
  readonly warnings: readonly string[];
}

/**
 * Decodes a single-document YAML config file (empty means `{}`) with `build`, which records problems in the
 * report under field paths. Throws {@link MeshConfigError} naming every error with its file and line.
 */
export function decodeConfigFile<T>(
  text: string,
  file: string,
  build: (report: ValidationReport, value: unknown) => T,
): DecodedFile<T> {
  const stream = parseYamlDocuments(text);
  if (stream.errors.length > 0) {
    throw new MeshConfigError(
      file,
      stream.errors.map((e) => `${file}:${e.line}:${e.column}: YAML syntax error: ${e.message}`),
    );
  }
  if (stream.documents.length > 1) {
    throw new MeshConfigError(file, [
      `${file}:${
        stream.documents[1].line
      }: expected a single YAML document, found ${stream.documents.length}`,
    ]);
  }
  const doc = stream.documents[0];
  const report = new ValidationReport();
  const value = build(report, doc?.value ?? {});
  const format = (issue: Issue) => {
    const line = issue.line ?? doc?.lineOf(issue.path) ?? 1;
    return `${file}:${line}: ${issue.path === "" ? "" : `${issue.path}: `}${issue.message}`;
  };
  if (!report.ok) throw new MeshConfigError(file, report.errors.map(format));
  return { value, warnings: report.warnings.map(format) };
}
