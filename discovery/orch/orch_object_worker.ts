/**
 * The orchestrator config source's worker: judges the large objects it is sent (`judgeOrchObject`), so a
 * VirtualService of thousands of regex routes does not hold the event loop while it is validated.
 *
 * @module
 */
import { serveJobs } from "@mesh/shared/process/off_thread_jobs";
import { judgeOrchObject } from "./orch_object_verdict.ts";

serveJobs(judgeOrchObject);
