import { HttpError, jsonResponse } from "@mesh/shared/http/router";
import type { DebugInterface } from "./debug_interface.ts";
import { type Profiler, ProfilerUnavailableError } from "./inspector_profiler.ts";

/** Longest CPU profile a request may ask for. */
export const MAX_PROFILE_SECONDS = 600;
const DEFAULT_PROFILE_SECONDS = 30;

/**
 * Registers `/debug/pprof/` (index), `/debug/pprof/profile?seconds=N` (a CPU profile, downloaded as
 * `.cpuprofile`, opened by Chrome DevTools or VS Code), `/debug/pprof/heap` (a heap snapshot, `.heapsnapshot`) and
 * `/debug/pprof/allocs?seconds=N[&promoted=true]` (sampled allocations, `.heapprofile`). Only with `--profile`.
 */
export function addPprofRoutes(
  debug: DebugInterface,
  profiler: Profiler,
  program = "mesh-discovery",
): DebugInterface {
  debug.add("/debug/pprof/", "Profiles this process can take (with --profile)", (_req, url) => {
    if (url.pathname !== "/debug/pprof/") {
      throw new HttpError(404, `No profile "${url.pathname}"; see /debug/pprof/`);
    }
    return jsonResponse({
      profiles: [
        {
          path: "/debug/pprof/profile?seconds=N",
          help:
            `CPU profile over N seconds (default ${DEFAULT_PROFILE_SECONDS}, at most ${MAX_PROFILE_SECONDS}); .cpuprofile`,
        },
        { path: "/debug/pprof/heap", help: "Heap snapshot; .heapsnapshot" },
        {
          path: "/debug/pprof/allocs?seconds=N&promoted=true",
          help:
            `Allocations sampled over N seconds; with promoted=true only those that outlived a young-generation ` +
            `collection (what fills the old generation); .heapprofile`,
        },
      ],
    });
  });
  debug.add(
    "/debug/pprof/profile",
    "CPU profile for ?seconds=N, downloaded as .cpuprofile",
    async (request, url) => {
      const seconds = parseSeconds(url.searchParams.get("seconds"));
      // A client that leaves ends the profile, so the profiler is free for the next one at once.
      const profile = await unavailableAs503(() => profiler.cpuProfile(seconds, request.signal));
      return download(JSON.stringify(profile), `${program}-${stamp()}.cpuprofile`);
    },
  );
  debug.add("/debug/pprof/heap", "Heap snapshot, downloaded as .heapsnapshot", async () => {
    const chunks = await unavailableAs503(() => profiler.heapSnapshot());
    return download(new Blob(chunks), `${program}-${stamp()}.heapsnapshot`);
  });
  debug.add(
    "/debug/pprof/allocs",
    "Allocations sampled for ?seconds=N (&promoted=true: only those promoted), downloaded as .heapprofile",
    async (request, url) => {
      const seconds = parseSeconds(url.searchParams.get("seconds"));
      const promotedOnly = parseFlag("promoted", url.searchParams.get("promoted"));
      const profile = await unavailableAs503(() =>
        profiler.allocationProfile(seconds, { promotedOnly }, request.signal)
      );
      return download(JSON.stringify(profile), `${program}-${stamp()}.heapprofile`);
    },
  );
  return debug;
}

function parseFlag(name: string, text: string | null): boolean {
  if (text === null || text === "" || text === "false") return false;
  if (text === "true") return true;
  throw new HttpError(400, `Invalid ${name} "${text}": expected true or false`);
}

function parseSeconds(text: string | null): number {
  if (text === null || text === "") return DEFAULT_PROFILE_SECONDS;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
    throw new HttpError(400, `Invalid seconds "${text}": expected a number in (0, ${MAX_PROFILE_SECONDS}]`);
  }
  return seconds;
}

async function unavailableAs503<T>(take: () => Promise<T>): Promise<T> {
  try {
    return await take();
  } catch (error) {
    if (error instanceof ProfilerUnavailableError) throw new HttpError(503, error.message);
    throw error;
  }
}

function download(body: BodyInit, filename: string): Response {
  return new Response(body, {
    headers: {
      "content-type": "application/json",
      "content-disposition": `attachment; filename="${filename}"`,
    },
  });
}

function stamp(): string {
  return new Date().toISOString().replaceAll(":", "").replace(/\.\d+Z$/, "Z");
}
