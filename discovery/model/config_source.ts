import type { RejectedConfig } from "./config_store.ts";

/** A source of mesh config (a directory, the orchestrator) as the debug pages and the startup line see it. */
export interface ConfigSource {
  /** Objects it currently refuses, for `/debug/configz`. */
  rejected(): RejectedConfig[];
  /** Its state (what it watches, when it last loaded), for `/debug/configz`. */
  status(): unknown;
}

/** Every source's refused objects, in the order of `sources`. */
export function rejectedByAll(sources: Iterable<ConfigSource>): RejectedConfig[] {
  return [...sources].flatMap((source) => source.rejected());
}
