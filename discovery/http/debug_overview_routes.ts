import { assetHandler, htmlResponse } from "@mesh/shared/http/html";
import { jsonResponse } from "@mesh/shared/http/router";
import { PAGE_STYLE } from "@mesh/shared/http/page_style";
import { KINDS } from "@mesh/shared/config/kinds";
import type { ConfigStore, RejectedConfig } from "../model/config_store.ts";
import type { PushHistory } from "../push/push_history.ts";
import type { DebugInterface } from "./debug_interface.ts";
import {
  DEBUG_STYLESHEET,
  debugOverviewPage,
  type OverviewDuty,
  type OverviewProxy,
} from "./debug_overview_page.ts";

/** What the overview reads, per request. */
export interface DebugOverviewSources {
  /** Connected proxies and their sync state (the xDS server's `proxyOverview`). */
  readonly proxies: () => readonly OverviewProxy[];
  /** Version of the latest push snapshot. */
  readonly latestPush: () => string | undefined;
  readonly store: ConfigStore;
  /** Documents the config sources refused, and why. */
  readonly rejected: () => readonly RejectedConfig[];
  readonly pushes: PushHistory;
  /** The singleton duties: which this replica leads, and the holder of each. */
  readonly duties?: () => readonly OverviewDuty[];
}

/**
 * Registers `/debug/overview` (an HTML page; loopback only unless DEBUG_REMOTE_ACCESS, as it shows what
 * `/debug/configz` does) and its stylesheet.
 */
export function addDebugOverview(debug: DebugInterface, sources: DebugOverviewSources): DebugInterface {
  debug.add(
    "/debug/overview",
    "A page: connected proxies and their sync, NACKs, refused config, recent pushes",
    () =>
      htmlResponse(debugOverviewPage({
        proxies: sources.proxies(),
        latestPush: sources.latestPush(),
        resources: KINDS.flatMap((k) =>
          sources.store.list(k.kind).map((r) => ({
            kind: k.kind,
            namespace: r.meta.namespace,
            name: r.meta.name,
          }))
        ),
        rejected: sources.rejected(),
        ...(sources.duties ? { duties: sources.duties() } : {}),
        pushes: {
          buckets: sources.pushes.series(),
          window: sources.pushes.summary(),
          spanMs: sources.pushes.spanMs,
        },
      })),
  );
  const duties = sources.duties;
  if (duties) {
    debug.add(
      "/debug/leaderz",
      "Singleton duties (Lease names): whether this replica leads each, and the holder it last saw",
      () => jsonResponse(duties()),
    );
  }
  debug.add(
    DEBUG_STYLESHEET,
    "Stylesheet of the overview",
    assetHandler(PAGE_STYLE, "text/css; charset=utf-8"),
  );
  return debug;
}
