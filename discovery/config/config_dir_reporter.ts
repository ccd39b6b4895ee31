import { findKind } from "@mesh/shared/config/kinds";
import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import type { ConfigWarning, DocumentRejection } from "./config_file_load.ts";

/**
 * Logs and counts each distinct rejection (file, document, errors) and warning once: when it first appears.
 * A problem that persists across reloads is not repeated; one that is fixed and comes back is new again.
 */
export class ConfigDirReporter {
  readonly #logger: Logger;
  readonly #metrics: Metrics | undefined;
  #rejections = new Set<string>();
  #warnings = new Set<string>();

  constructor(logger: Logger, metrics?: Metrics) {
    this.#logger = logger;
    this.#metrics = metrics;
  }

  /** Reports what is new in the current rejections and warnings, and forgets what went away. */
  report(rejections: readonly DocumentRejection[], warnings: readonly ConfigWarning[]): void {
    const seenRejections = new Set<string>();
    for (const rejection of rejections) {
      const signature = `${rejection.file}\u0000${rejection.slot}\u0000${rejection.errors.join("\n")}`;
      seenRejections.add(signature);
      if (this.#rejections.has(signature)) continue;
      this.#logRejection(rejection);
      this.#count(rejection);
    }
    this.#rejections = seenRejections;
    const seenWarnings = new Set<string>();
    for (const warning of warnings) {
      const signature = `${warning.file}\u0000${warning.line}\u0000${warning.message}`;
      seenWarnings.add(signature);
      if (this.#warnings.has(signature)) continue;
      this.#logger.warn(`config warning at ${warning.file}:${warning.line}: ${warning.message}`, {
        file: warning.file,
        line: warning.line,
        ...(warning.kind && { kind: warning.kind }),
        ...(warning.namespace && { namespace: warning.namespace }),
        ...(warning.name && { name: warning.name }),
      });
    }
    this.#warnings = seenWarnings;
  }

  #logRejection(rejection: DocumentRejection): void {
    const what = rejection.slot === "*"
      ? `config file ${rejection.file}`
      : rejection.kind && rejection.name
      ? `${rejection.kind} ${rejection.namespace}/${rejection.name} at ${rejection.file}:${rejection.line}`
      : `config document at ${rejection.file}:${rejection.line}`;
    this.#logger.error(`rejected ${what}: ${rejection.errors.join("; ")}`, {
      file: rejection.file,
      line: rejection.line,
      ...(rejection.kind && { kind: rejection.kind }),
      ...(rejection.namespace && { namespace: rejection.namespace }),
      ...(rejection.name && { name: rejection.name }),
      reason: rejection.reason,
      errors: rejection.errors,
    });
  }

  #count(rejection: DocumentRejection): void {
    if (!this.#metrics) return;
    const kind = rejection.kind ?? "unknown";
    this.#metrics.counter("discovery_total_rejected_configs").inc({ type: kind });
    const info = rejection.group && rejection.kind ? findKind(rejection.group, rejection.kind) : undefined;
    this.#metrics.counter("config_validation_failed").inc({
      group: rejection.group ?? "",
      version: rejection.version ?? "",
      resource: info?.plural ?? kind.toLowerCase(),
      reason: rejection.reason,
    });
  }
}
