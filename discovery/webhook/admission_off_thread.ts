import { peerAddress } from "@mesh/shared/http/serve";
import type { OffThreadJobs } from "@mesh/shared/process/off_thread_jobs";

/**
 * Reviews whose body has at least this many characters are judged off the event loop. A typical pod's review
 * is a few KiB and takes about a millisecond in line; judging costs up to about 0.7 ms per KiB (an injection
 * of a pod of 200,000 annotations, 2.6 MiB, took 1.8 s), so from here one review could hold every push and
 * `/ready` for longer than 40 ms.
 */
export const OFF_THREAD_REVIEW_CHARS = 64 * 1024;

/** The answer's message when a review waited for the worker until its caller had stopped waiting. */
export const ADMISSION_BUSY_MESSAGE =
  "The webhook is busy: this review waited for its turn longer than the API server waits for an answer; retry";

/** A webhook's worker for large reviews, and the body length from which reviews go there. */
export interface AdmissionOffThread<J, R> {
  readonly jobs: OffThreadJobs<J, R>;
  /** Bodies of at least this many characters are judged by `jobs` (default {@link OFF_THREAD_REVIEW_CHARS}). */
  readonly fromChars?: number;
}

/**
 * Judges a review in line (`inline`), or, when its body is long enough and `offThread` is given, in the worker
 * (`job` is what the worker is sent). Jobs are queued by the caller's address, so another caller's review
 * waits for at most one of theirs; past `maxWaitMs` in the queue the promise rejects with `JobExpiredError`.
 */
export function judgeReview<J, R>(
  offThread: AdmissionOffThread<J, R> | undefined,
  request: Request,
  body: string,
  maxWaitMs: number,
  job: J,
  inline: () => R,
): Promise<R> {
  if (offThread === undefined || body.length < (offThread.fromChars ?? OFF_THREAD_REVIEW_CHARS)) {
    return Promise.resolve().then(inline);
  }
  return offThread.jobs.run(peerAddress(request)?.hostname ?? "", job, maxWaitMs);
}
