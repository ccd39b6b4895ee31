/**
 * Samples a server's resident set size from /proc while a benchmark runs, and kills the server (SIGKILL) once
 * it passes a limit, so an attack that succeeds cannot take the machine with it.
 *
 * @module
 */
import { processMemory } from "../bench_processes.ts";

/** Samples `/proc/<pid>/status` VmRSS every `intervalMs`; past `limitMiB`, calls `kill` (once). */
export class RssWatch {
  #peakKiB = 0;
  #latestKiB = 0;
  #killedAtMiB: number | undefined;
  #running = true;
  readonly #loop: Promise<void>;

  constructor(
    readonly pid: number,
    readonly limitMiB: number,
    readonly kill: () => void,
    readonly intervalMs = 250,
  ) {
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    while (this.#running && this.#killedAtMiB === undefined) {
      const { rssKiB } = processMemory(this.pid);
      if (rssKiB > 0) {
        this.#latestKiB = rssKiB;
        this.#peakKiB = Math.max(this.#peakKiB, rssKiB);
      }
      if (rssKiB / 1024 > this.limitMiB) {
        this.#killedAtMiB = Math.round(rssKiB / 1024);
        this.kill();
      }
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
    }
  }

  /** The highest RSS sampled so far, in MiB. */
  get peakMiB(): number {
    return Math.round(this.#peakKiB / 1024);
  }

  /** The latest RSS sampled, in MiB. */
  get latestMiB(): number {
    return Math.round(this.#latestKiB / 1024);
  }

  /** The RSS at which the watch killed the server, if it did. */
  get killedAtMiB(): number | undefined {
    return this.#killedAtMiB;
  }

  /** Ends sampling. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }
}
