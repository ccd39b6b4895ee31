/**
 * Registers ControlZ's pages next to its JSON paths: `/` (home), `/scopez/`, `/memz/`, `/procz/`, `/envz/`,
 * `/argsz/`, `/metricz/`, `/versionz/`, and the stylesheet and script they load from this server.
 *
 * @module
 */
import { getHeapStatistics } from "node:v8";
import { assetHandler, htmlResponse } from "@mesh/shared/http/html";
import { PAGE_STYLE } from "@mesh/shared/http/page_style";
import { HttpError, type Router } from "@mesh/shared/http/router";
import { loopbackOnly } from "@mesh/shared/http/serve";
import type { EnvSettings } from "@mesh/shared/env/env_settings";

import type { BuildInfo } from "@mesh/shared/version/build_info";
import type { ProcessFacts } from "../process_facts.ts";
import type { ReadNativeHeap } from "@mesh/shared/process/native_heap_figures";
import { memoryFigures } from "../memory_figures.ts";
import { CTRLZ_SCRIPT, CTRLZ_STYLESHEET } from "./ctrlz_layout.ts";
import { CTRLZ_SCRIPT_SOURCE } from "./ctrlz_script.ts";
import { metricsPage } from "./metrics_page.ts";
import {
  argumentsPage,
  environmentPage,
  homePage,
  memoryPage,
  processPage,
  versionPage,
} from "./process_pages.ts";
import { scopesPage, type ScopeView } from "./scopes_page.ts";

/** What the pages read; the same sources as the JSON paths. */
export interface CtrlzPageSources {
  /** Every log scope with its levels, as `/scopej/` lists them. */
  readonly scopes: () => readonly ScopeView[];
  readonly env: EnvSettings;
  readonly info: BuildInfo;
  readonly args: readonly string[];
  /** The facts of the process now. */
  readonly facts: () => ProcessFacts;
  /** The Prometheus text of the program's metrics; without it the metrics page says there are none. */
  readonly metrics?: () => Promise<string>;
  /** `DEBUG_REMOTE_ACCESS`: the environment and arguments pages answer callers other than loopback too. */
  readonly allowRemote: boolean;
  /** glibc's arenas, for the memory page. */
  readonly nativeHeap?: ReadNativeHeap;
}

/** Adds the ControlZ pages and their assets to `router`. */
export function addCtrlzPages(router: Router, sources: CtrlzPageSources): Router {
  router.add(
    CTRLZ_STYLESHEET,
    "Stylesheet of the pages",
    assetHandler(PAGE_STYLE, "text/css; charset=utf-8"),
  );
  router.add(
    CTRLZ_SCRIPT,
    "Script of the pages",
    assetHandler(CTRLZ_SCRIPT_SOURCE, "text/javascript; charset=utf-8"),
  );
  router.add("/", "Home: program, version, uptime, every path", (_req, url) => {
    // `/` is also the prefix of every path: an unknown one is not the home page.
    if (url.pathname !== "/") throw new HttpError(404, "No such page; see / for every path");
    return htmlResponse(homePage(sources.facts(), router.routes()));
  });
  router.add(
    "/scopez/",
    "Logging scopes; change a level from the page",
    () => htmlResponse(scopesPage(sources.scopes())),
  );
  router.add("/memz/", "Memory, refreshed live", () => {
    let heapLimit: number | undefined;
    try {
      heapLimit = getHeapStatistics().heap_size_limit;
    } catch {
      heapLimit = undefined;
    }
    return htmlResponse(memoryPage(memoryFigures(sources.nativeHeap), heapLimit));
  });
  router.add("/procz/", "Process", () => htmlResponse(processPage(sources.facts())));
  router.add(
    "/envz/",
    "Environment (loopback only unless DEBUG_REMOTE_ACCESS=true)",
    loopbackOnly(() => htmlResponse(environmentPage(sources.env.resolved())), sources.allowRemote),
  );
  router.add(
    "/argsz/",
    "Command-line arguments (loopback only unless DEBUG_REMOTE_ACCESS=true)",
    loopbackOnly(() => htmlResponse(argumentsPage(sources.args)), sources.allowRemote),
  );
  router.add("/metricz/", "Metrics (Prometheus text), searchable; ?q= filters by name", async (_req, url) => {
    const text = sources.metrics === undefined ? "" : await sources.metrics();
    return htmlResponse(metricsPage(text, (url.searchParams.get("q") ?? "").slice(0, 200)));
  });
  router.add("/versionz/", "Build information", () => htmlResponse(versionPage(sources.info)));
  return router;
}
