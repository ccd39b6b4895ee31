/**
 * Starts the proxy binary and keeps it running: `-c <bootstrap> --restart-epoch <n> --drain-time-s …
 * --parent-shutdown-time-s … --service-cluster … --service-node … --local-address-ip-version v4 --log-level …
 * --component-log-level … [--concurrency n]`; a proxy that exits on its own is started again with the next
 * epoch after a backoff (1 s doubling to 30 s, reset after a minute of running). After `MAX_QUICK_EXITS`
 * exits in a row, each within `QUICK_EXIT_MS` of its start, the supervisor gives up and says why.
 *
 * `stop()` drains first, as the reference does: POST `/drain_listeners?inboundonly&graceful` to the admin API
 * (`?graceful` for routers, which have no inbound listeners), waits the termination drain time, then sends
 * SIGTERM and, if the proxy is still there after `KILL_GRACE_MS`, SIGKILL.
 *
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/** How to run the proxy. */
export interface SupervisorOptions {
  /** ProxyConfig `binaryPath`. */
  readonly binaryPath: string;
  /** The bootstrap file. */
  readonly bootstrapPath: string;
  /** ProxyConfig `drainDuration` (s). */
  readonly drainSeconds: number;
  /** ProxyConfig `parentShutdownDuration` (s). */
  readonly parentShutdownSeconds: number;
  /** `--serviceCluster`. */
  readonly serviceCluster: string;
  /** The node id. */
  readonly serviceNode: string;
  /** `--proxyLogLevel`. */
  readonly logLevel: string;
  /** `--proxyComponentLogLevel`; empty leaves it out. */
  readonly componentLogLevel: string;
  /** `--concurrency` (or ProxyConfig `concurrency`); 0 leaves the proxy's default. */
  readonly concurrency: number;
  /** The proxy admin port, where `stop()` asks it to drain. */
  readonly adminPort: number;
  /** Routers drain every listener; sidecars only inbound ones. */
  readonly role: "sidecar" | "router";
  /** How long `stop()` lets the drained proxy finish before stopping it (termination drain duration), ms. */
  readonly terminationDrainMs: number;
  /** Wait before a restart: doubling from `first` to `max` ms (default 1 s to 30 s). */
  readonly restartBackoffMs?: { readonly first: number; readonly max: number };
  /** Told once when the supervisor gives up restarting the proxy. */
  readonly onGiveUp?: (error: Error) => void;
  readonly log: Logger;
  /** Timers of the restart backoff and of stop's waits; the clock of run times. Default: the runtime's. */
  readonly timers?: Timers;
}

/** A run shorter than this counts as a quick exit. */
export const QUICK_EXIT_MS = 10_000;
/** Quick exits in a row after which the supervisor gives up. */
export const MAX_QUICK_EXITS = 10;
/** After SIGTERM, the proxy gets this long before SIGKILL. */
export const KILL_GRACE_MS = 5_000;

/** The proxy binary is missing or not executable; names the path and the setting. */
export class ProxyBinaryError extends Error {
  constructor(readonly binaryPath: string, cause: unknown) {
    super(
      `Cannot run the proxy binary "${binaryPath}" (ProxyConfig binaryPath): ${
        cause instanceof Error ? cause.message : cause
      }; install the proxy there or set binaryPath`,
      { cause },
    );
    this.name = "ProxyBinaryError";
  }
}

/** The command-line arguments the proxy is started with at `epoch`. */
export function proxyArguments(o: SupervisorOptions, epoch: number): string[] {
  return [
    "-c",
    o.bootstrapPath,
    "--restart-epoch",
    String(epoch),
    "--drain-time-s",
    String(o.drainSeconds),
    "--parent-shutdown-time-s",
    String(o.parentShutdownSeconds),
    "--service-cluster",
    o.serviceCluster,
    "--service-node",
    o.serviceNode,
    "--local-address-ip-version",
    "v4",
    "--log-level",
    o.logLevel,
    ...(o.componentLogLevel !== "" ? ["--component-log-level", o.componentLogLevel] : []),
    ...(o.concurrency > 0 ? ["--concurrency", String(o.concurrency)] : []),
  ];
}

/** Runs and restarts the proxy. */
export class ProxySupervisor {
  readonly #options: SupervisorOptions;
  #child?: Deno.ChildProcess;
  #epoch = 0;
  #stopping = false;
  #backoffMs: number;
  #quickExits = 0;
  readonly #timers: Timers;
  #timer?: unknown;
  /** Exits observed (for tests and logs). */
  restarts = 0;

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#backoffMs = this.#backoff.first;
  }

  get #backoff(): { readonly first: number; readonly max: number } {
    return this.#options.restartBackoffMs ?? { first: 1000, max: 30_000 };
  }

  /** The running proxy's pid, if any. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * Starts the proxy.
   *
   * @throws {ProxyBinaryError} when the binary is missing or cannot be started (the first start only; later
   *   failures are retried)
   */
  start(): void {
    const o = this.#options;
    const startedAt = this.#timers.now();
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(o.binaryPath, {
        args: proxyArguments(o, this.#epoch),
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      }).spawn();
    } catch (error) {
      const failure = new ProxyBinaryError(o.binaryPath, error);
      if (this.#epoch === 0) throw failure;
      o.log.error("cannot start the proxy", { binary: o.binaryPath, error: failure.message });
      this.#exited(0);
      return;
    }
    this.#child = child;
    o.log.info("proxy started", { binary: o.binaryPath, epoch: this.#epoch, pid: child.pid });
    child.status.then((status) => {
      if (this.#child === child) this.#child = undefined;
      if (this.#stopping) return;
      o.log.warn("proxy exited; restarting it", {
        code: status.code,
        signal: status.signal,
        epoch: this.#epoch,
      });
      this.restarts++;
      this.#exited(this.#timers.now() - startedAt);
    });
  }

  #exited(ranMs: number): void {
    if (ranMs > 60_000) this.#backoffMs = this.#backoff.first;
    this.#quickExits = ranMs < QUICK_EXIT_MS ? this.#quickExits + 1 : 0;
    if (this.#quickExits >= MAX_QUICK_EXITS) {
      const error = new Error(
        `the proxy (${this.#options.binaryPath}) exited ${this.#quickExits} times in a row, each within ` +
          `${QUICK_EXIT_MS / 1000} s of starting; giving up (see its output above)`,
      );
      this.#options.log.error("giving up on the proxy", { error: error.message });
      this.#options.onGiveUp?.(error);
      return;
    }
    const wait = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoff.max, this.#backoffMs * 2);
    this.#timer = this.#timers.setTimeout(() => {
      this.#epoch++;
      this.start();
    }, wait);
  }

  /** Drains the proxy's listeners, waits the termination drain time, then stops it. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    const child = this.#child;
    if (child === undefined) return;
    const o = this.#options;
    const query = o.role === "router" ? "graceful" : "inboundonly&graceful";
    try {
      const response = await fetch(`http://127.0.0.1:${o.adminPort}/drain_listeners?${query}`, {
        method: "POST",
        signal: AbortSignal.timeout(2_000),
      });
      await response.body?.cancel();
      o.log.info("proxy draining", { status: response.status, waitMs: o.terminationDrainMs });
    } catch (error) {
      o.log.warn("cannot ask the proxy to drain; stopping it anyway", { error: (error as Error).message });
    }
    let exited = false;
    const timers = this.#timers;
    let drainTimer: unknown;
    const exit = child.status.then(() => exited = true);
    await Promise.race([
      exit,
      new Promise<void>((resolve) => drainTimer = timers.setTimeout(resolve, o.terminationDrainMs)),
    ]);
    timers.clearTimeout(drainTimer);
    if (exited) return;
    try {
      child.kill("SIGTERM");
    } catch {
      return;
    }
    const killer = timers.setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, KILL_GRACE_MS);
    await child.status;
    timers.clearTimeout(killer);
  }
}
