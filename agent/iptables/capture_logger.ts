/** The logging this module needs: the four levels of the agent's scoped logger (`shared/log`), which fits it. */

import type { Logger } from "@mesh/shared/log/logger";

/** A logger with debug/info/warn/error; the agent's scoped `Logger` is one. */
export type CaptureLogger = Pick<Logger, "debug" | "info" | "warn" | "error">;
