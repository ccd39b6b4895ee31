/** What ControlZ tells about the running process (`/procj/` and the home and process pages). */
export interface ProcessFacts {
  readonly program: string;
  readonly version: string;
  readonly pid: number;
  readonly ppid: number;
  readonly hostname?: string;
  /** Start time, ISO 8601. */
  readonly started: string;
  readonly uptimeSeconds: number;
  readonly cwd?: string;
}

/** The facts of this process now, given when it started. */
export function processFacts(program: string, version: string, startedAt: Date, now: number): ProcessFacts {
  const hostname = safe(() => Deno.hostname());
  const cwd = safe(() => Deno.cwd());
  return {
    program,
    version,
    pid: Deno.pid,
    ppid: Deno.ppid,
    ...(hostname === undefined ? {} : { hostname }),
    started: startedAt.toISOString(),
    uptimeSeconds: Math.round((now - startedAt.getTime()) / 1000),
    ...(cwd === undefined ? {} : { cwd }),
  };
}

function safe(fn: () => string): string | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
