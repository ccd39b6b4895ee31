/**
 * The validation webhook's worker: judges the review bodies it is sent (`judgeValidationReview`), so a large
 * review does not hold the event loop.
 *
 * @module
 */
import { serveJobs } from "@mesh/shared/process/off_thread_jobs";
import { judgeValidationReview } from "./validation_webhook.ts";

serveJobs(judgeValidationReview);
