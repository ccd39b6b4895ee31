/**
 * Analysis results written back to the orchestrator: each resource read from it gets its messages in
 * `status.validationMessages` (the reference's `type {name, code}` and `level`), and a resource whose messages
 * went away gets the field cleared. Only the leader of the analysis duty writes; every write goes through the one
 * status writer and its QPS budget, and is dropped if the duty is lost before it is sent.
 *
 * @module
 */
import type { DutyGate } from "@mesh/shared/lifecycle/duty_gate";
import { KINDS } from "@mesh/shared/config/kinds";
import type { Resource } from "@mesh/shared/config/resource";
import type { AnalysisMessage } from "../analysis/analysis_message.ts";
import type { AnalysisSink, MessagesByResource } from "../analysis/analysis_sink.ts";
import type { StatusRef } from "./status_writer.ts";

/** What the sink needs. */
export interface ValidationMessagesSinkOptions {
  /** Writes one status field of one resource. */
  readonly writer: { writeField(ref: StatusRef, field: string, value: unknown, signal?: AbortSignal): void };
  /** `DUTIES.analyzeController`. */
  readonly gate: DutyGate;
  /** The resource under a `Kind/namespace/name` key, when the orchestrator holds it as a custom resource. */
  readonly resource: (key: string) => Resource | undefined;
}

/** `status.validationMessages` of one message, as the reference writes it. */
function validationMessage(message: AnalysisMessage): Record<string, unknown> {
  return { type: { name: message.type, code: message.code }, level: message.level.toUpperCase() };
}

/** Writes each run's messages to the resources' status while this replica leads analysis. */
export class ValidationMessagesSink implements AnalysisSink {
  readonly #options: ValidationMessagesSinkOptions;
  readonly #byKind = new Map<string, (typeof KINDS)[number]>(KINDS.map((k) => [k.kind, k]));
  /** What this replica last wrote to each resource's status, as JSON: an unchanged result is not written again. */
  #written = new Map<string, string>();
  #signal: AbortSignal | undefined;
  /** The last run's result: a replica that wins the duty writes it at once rather than after the next change. */
  #last: MessagesByResource | undefined;

  constructor(options: ValidationMessagesSinkOptions) {
    this.#options = options;
    options.gate.whileLeading((signal) => {
      this.#signal = signal;
      // A new leader does not know what the last one wrote: it writes every resource it has.
      this.#written = new Map();
      if (this.#last !== undefined) this.publish(this.#last);
    });
  }

  publish(messagesByResource: MessagesByResource): void {
    this.#last = messagesByResource;
    const signal = this.#signal;
    if (signal === undefined || signal.aborted) return;
    const next = new Map<string, string>();
    for (const [key, messages] of messagesByResource) {
      const ref = this.#refOf(key);
      if (ref === undefined) continue;
      const value = messages.map(validationMessage);
      const json = JSON.stringify(value);
      next.set(key, json);
      if (this.#written.get(key) !== json) {
        this.#options.writer.writeField(ref, "validationMessages", value, signal);
      }
    }
    for (const key of this.#written.keys()) {
      if (next.has(key)) continue;
      const ref = this.#refOf(key);
      if (ref !== undefined) this.#options.writer.writeField(ref, "validationMessages", undefined, signal);
    }
    this.#written = next;
  }

  #refOf(key: string): StatusRef | undefined {
    const resource = this.#options.resource(key);
    // Only objects the orchestrator holds (they carry its uid) have a status to write; files and Ingress
    // translations do not.
    const info = resource?.meta.uid === undefined ? undefined : this.#byKind.get(resource.gvk.kind);
    if (resource === undefined || info === undefined) return undefined;
    return {
      group: info.group,
      version: info.versions.at(-1)!,
      plural: info.plural,
      namespace: resource.meta.namespace,
      name: resource.meta.name,
    };
  }
}
