/**
 * Starts the proxy binary and keeps it running: `-c <bootstrap> --restart-epoch <n> --drain-time-s …
 * --parent-shutdown-time-s … --local-address-ip-version v4 --log-level …`; a proxy that exits on its own is
 * started again with the next epoch after a backoff (1 s doubling to 30 s, reset after a minute of running).
 * `stop()` sends SIGTERM, waits up to the drain time, then SIGKILL.
 *
 * @module
 */
import type { Logger } from "../../shared/log/logger.ts";

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
  /** `--proxyLogLevel`. */
  readonly logLevel: string;
  /** ProxyConfig `terminationDrainDuration` (ms): how long `stop()` waits before killing. */
  readonly terminationDrainMs: number;
  readonly log: Logger;
}

/** Runs and restarts the proxy. */
export class ProxySupervisor {
  readonly #options: SupervisorOptions;
  #child?: Deno.ChildProcess;
  #epoch = 0;
  #stopping = false;
  #backoffMs = 1000;
  #timer?: ReturnType<typeof setTimeout>;
  /** Exits observed (for tests and logs). */
  restarts = 0;

  constructor(options: SupervisorOptions) {
    this.#options = options;
  }

  /** The running proxy's pid, if any. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the proxy. */
  start(): void {
    const o = this.#options;
    const args = [
      "-c",
      o.bootstrapPath,
      "--restart-epoch",
      String(this.#epoch),
      "--drain-time-s",
      String(o.drainSeconds),
      "--parent-shutdown-time-s",
      String(o.parentShutdownSeconds),
      "--local-address-ip-version",
      "v4",
      "--log-level",
      o.logLevel,
    ];
    const startedAt = Date.now();
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(o.binaryPath, { args, stdin: "null", stdout: "inherit", stderr: "inherit" })
        .spawn();
    } catch (error) {
      o.log.error("cannot start the proxy", { binary: o.binaryPath, error: (error as Error).message });
      this.#scheduleRestart(0);
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
      this.#scheduleRestart(Date.now() - startedAt);
    });
  }

  #scheduleRestart(ranMs: number): void {
    if (ranMs > 60_000) this.#backoffMs = 1000;
    const wait = this.#backoffMs;
    this.#backoffMs = Math.min(30_000, this.#backoffMs * 2);
    this.#timer = setTimeout(() => {
      this.#epoch++;
      this.start();
    }, wait);
  }

  /** Asks the proxy to drain and exit (SIGTERM); kills it after the termination drain time. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const child = this.#child;
    if (child === undefined) return;
    try {
      child.kill("SIGTERM");
    } catch {
      return;
    }
    const killer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, this.#options.terminationDrainMs);
    await child.status;
    clearTimeout(killer);
  }
}
