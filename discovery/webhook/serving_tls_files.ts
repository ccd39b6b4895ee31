/**
 * Follows `--tlsCertFile`/`--tlsKeyFile` after startup, as the reference does: a certificate renewed in place
 * (an orchestrator Secret volume swapping its `..data` link, a renewal tool writing new files) is served to new
 * connections without a restart. The folders holding the two files are watched, and the files are also read
 * on an interval, so a change the watch misses is still seen. A pair that does not load (half written, the key
 * of another certificate) is logged and skipped: the last good pair stays served until a read finds them
 * matching again.
 *
 * @module
 */
import { dirname } from "node:path";
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";
import { loadServingTls, type ServingTls } from "./serving_tls.ts";

/** How long file events settle before the pair is read (a swap touches both files, and links, at once). */
const DEBOUNCE_MS = 200;
/** How often the files are read whether or not an event came. */
const CHECK_INTERVAL_MS = 60_000;

/** Options of {@link followServingTlsFiles}. */
export interface ServingTlsFilesOptions {
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  /** The pair served now (read at startup); a read finding the same text changes nothing. */
  readonly current: ServingTls;
  readonly log: Logger;
  readonly timers?: Timers;
  /** Interval of the fallback read (default 60 s). */
  readonly checkIntervalMs?: number;
}

/** A running follower of the serving certificate files. */
export interface ServingTlsFiles {
  /** Reads the files now; resolves once the read is done (listeners told of a change). */
  check(): Promise<void>;
  close(): void;
}

/**
 * Calls `onChange` with each new pair the files hold once it loads (parses, key matches certificate); an
 * `onChange` that throws keeps the last good pair served, logged as a pair that does not load. Returns the
 * follower, which must be closed.
 */
export function followServingTlsFiles(
  options: ServingTlsFilesOptions,
  onChange: (tls: ServingTls) => void,
): ServingTlsFiles {
  const timers = options.timers ?? systemTimers;
  let served = `${options.current.cert}\n${options.current.key}`;
  /** The text of the last pair refused, so a pair that stays broken is logged once. */
  let refused: string | undefined;
  let closed = false;
  let reading: Promise<void> | undefined;
  let again = false;
  let debounce: unknown;

  const read = async () => {
    const [cert, key] = await Promise.all([
      Deno.readTextFile(options.tlsCertFile).catch(() => undefined),
      Deno.readTextFile(options.tlsKeyFile).catch(() => undefined),
    ]);
    const text = `${cert}\n${key}`;
    if (closed || cert === undefined || key === undefined || text === served || text === refused) return;
    try {
      const loaded = await loadServingTls({
        tlsCertFile: options.tlsCertFile,
        tlsKeyFile: options.tlsKeyFile,
        log: options.log,
      });
      // The files may have changed again between the two reads: serve what was loaded, remember its text. A
      // listener that cannot take the pair throws, and the pair counts as refused.
      if (!closed) onChange(loaded);
      served = `${loaded.cert}\n${loaded.key}`;
      refused = undefined;
    } catch (error) {
      refused = text;
      options.log.warn(
        "the serving certificate files changed but do not load or cannot be served; serving the last good pair",
        {
          certFile: options.tlsCertFile,
          keyFile: options.tlsKeyFile,
          error: (error as Error).message,
        },
      );
    }
  };
  // One read at a time; a request during one runs once more after it.
  const check = (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    reading = read().finally(() => {
      reading = undefined;
      if (again && !closed) {
        again = false;
        void check();
      }
    });
    return reading;
  };

  const watchers: Deno.FsWatcher[] = [];
  for (const dir of new Set([dirname(options.tlsCertFile), dirname(options.tlsKeyFile)])) {
    let watcher: Deno.FsWatcher;
    try {
      watcher = Deno.watchFs(dir, { recursive: false });
    } catch (error) {
      options.log.warn("cannot watch the serving certificate's folder; reading it on the interval only", {
        dir,
        error: (error as Error).message,
      });
      continue;
    }
    watchers.push(watcher);
    (async () => {
      for await (const _event of watcher) {
        if (closed) break;
        timers.clearTimeout(debounce);
        debounce = timers.setTimeout(() => void check(), DEBOUNCE_MS);
      }
    })().catch(() => {});
  }
  let interval: unknown;
  const every = () => {
    interval = timers.setTimeout(() => {
      void check();
      if (!closed) every();
    }, options.checkIntervalMs ?? CHECK_INTERVAL_MS);
  };
  every();

  return {
    check,
    close() {
      closed = true;
      timers.clearTimeout(debounce);
      timers.clearTimeout(interval);
      for (const watcher of watchers) {
        try {
          watcher.close();
        } catch {
          // already closed
        }
      }
    },
  };
}
