import { jsonResponse } from "@mesh/shared/http/router";
import type { AnalysisView } from "../analysis/analysis_sink.ts";
import type { DebugInterface } from "./debug_interface.ts";

/** What `/debug/analyzez` shows: the analyzers that run, and the last result when analysis is on. */
export interface AnalysisDebugSource {
  /** The last result; absent when DISCOVERY_ENABLE_ANALYSIS is off. */
  readonly view?: () => AnalysisView;
  /** Names of the analyzers that run in this mode (file mode: those that need mesh resources only). */
  readonly analyzers: readonly string[];
}

/** Registers `/debug/analyzez`: the configuration analyzers' messages, by resource. */
export function addAnalysisDebugRoutes(debug: DebugInterface, source: AnalysisDebugSource): DebugInterface {
  debug.add(
    "/debug/analyzez",
    "Configuration analysis messages of the last run, by resource (DISCOVERY_ENABLE_ANALYSIS)",
    () =>
      jsonResponse(
        source.view
          ? { enabled: true, analyzers: source.analyzers, ...source.view() }
          : { enabled: false, analyzers: [] },
      ),
  );
  return debug;
}
