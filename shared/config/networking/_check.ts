import { ValidationReport } from "../validation/report.ts";
import type { ValidationContext } from "../validation/context.ts";

/** A spec validator as registered for a kind. */
type Validator = (spec: unknown, report: ValidationReport, ctx: ValidationContext) => void;

/** Outcome of one validation run, reduced to what tests compare. */
export interface Checked {
  /** Paths of the errors, in report order. */
  readonly errors: string[];
  /** Paths of the warnings, in report order. */
  readonly warnings: string[];
  /** `path: message` of every error, for assertion messages and message checks. */
  readonly messages: string[];
}

/** Runs `validate` on `spec` in namespace `default` (name `test` unless given) and returns what it found. */
export function check(validate: Validator, spec: unknown, ctx: Partial<ValidationContext> = {}): Checked {
  const report = new ValidationReport();
  validate(spec, report, { namespace: ctx.namespace ?? "default", name: ctx.name ?? "test" });
  return {
    errors: report.errors.map((e) => e.path),
    warnings: report.warnings.map((w) => w.path),
    messages: report.errors.map((e) => `${e.path}: ${e.message}`),
  };
}
