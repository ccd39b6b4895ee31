/**
 * The verdict on one mesh object read from the orchestrator: its resource, or every error found in it. A pure
 * function of the object's JSON text, so the same judgement runs in line for a small object and in the
 * orchestrator source's worker for a large one.
 *
 * @module
 */
import { parseResource } from "@mesh/shared/config/validate_resource";
import type { Resource } from "@mesh/shared/config/resource";

/**
 * Objects whose JSON is at least this many characters are judged in a worker. Validation costs about 1 ms per
 * KiB of routes with regexes (a 1 MiB VirtualService of 6,000 regex routes: 0.8–1.1 s), so at this size a judgement
 * in line holds the event loop for tens of milliseconds at most.
 */
export const OFF_THREAD_OBJECT_CHARS = 64 * 1024;

/** One object to judge: its JSON as the API sent it, and where it comes from for messages. */
export interface OrchObjectJob {
  /** The object as JSON. */
  readonly text: string;
  /** `orchestrator:group/plural/namespace/name`, the prefix of every error. */
  readonly origin: string;
}

/** The resource an object stands for, or why it was refused (each error prefixed with its origin). */
export type OrchObjectVerdict =
  | { readonly ok: true; readonly resource: Resource }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Validates an object from the orchestrator with the same validators as the file source. */
export function judgeOrchObject(job: OrchObjectJob): OrchObjectVerdict {
  const { resource, report } = parseResource(
    JSON.parse(job.text),
    { file: job.origin, line: 1 },
    { defaultNamespace: "default" },
  );
  if (resource !== undefined) return { ok: true, resource };
  return {
    ok: false,
    errors: report.errors.map((i) =>
      `${job.origin}: ${i.path === "" ? i.message : `${i.path}: ${i.message}`}`
    ),
  };
}
