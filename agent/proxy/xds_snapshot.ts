/**
 * `LOCAL_XDS_GENERATOR_CONFIG_SAVE_PATH`: the xDS proxy keeps the latest response of each type it relayed in a
 * JSON file, so an operator can see what the proxy was given without reaching its admin API. The file is
 * rewritten whole (never half-written) at most once per `SNAPSHOT_WRITE_MS`.
 *
 * @module
 */
import type protobuf from "protobufjs";
import { decodeAny } from "@mesh/proto/any_codec";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import type { Logger } from "@mesh/shared/log/logger";
import { systemTimers, type Timers } from "@mesh/shared/time/timers";

/** The shortest time between two writes of the snapshot. */
export const SNAPSHOT_WRITE_MS = 1_000;

interface TypeSnapshot {
  readonly version_info: string;
  readonly nonce: string;
  readonly resources: readonly unknown[];
}

/** Keeps the latest response per type and writes them to one JSON file. */
export class XdsSnapshotWriter {
  readonly #path: string;
  readonly #log: Logger;
  readonly #responseType: protobuf.Type;
  readonly #latest = new Map<string, TypeSnapshot>();
  readonly #timers: Timers;
  #timer?: unknown;
  #writing: Promise<void> = Promise.resolve();
  #lastError = "";

  /** Writes to `path`; `timers` pace the writes (the runtime's by default). */
  constructor(path: string, log: Logger, timers: Timers = systemTimers) {
    this.#path = path;
    this.#log = log;
    this.#timers = timers;
    this.#responseType = loadEnvoySchema().lookupType("envoy.service.discovery.v3.DiscoveryResponse");
  }

  /** Records one DiscoveryResponse as received; a response that does not decode is logged and skipped. */
  record(bytes: Uint8Array): void {
    try {
      const response = this.#responseType.decode(bytes) as unknown as {
        version_info: string;
        nonce: string;
        type_url: string;
        resources: { type_url: string; value: Uint8Array }[];
      };
      const anyType = loadEnvoySchema().lookupType("google.protobuf.Any");
      this.#latest.set(response.type_url, {
        version_info: response.version_info,
        nonce: response.nonce,
        resources: response.resources.map((any) => {
          try {
            return decodeAny(anyType.encode(anyType.create(any)).finish()).resource;
          } catch {
            return { "@type": any.type_url, undecoded_bytes: any.value.length };
          }
        }),
      });
    } catch (error) {
      this.#log.warn("cannot record an xDS response in the snapshot", { error: (error as Error).message });
      return;
    }
    this.#timer ??= this.#timers.setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, SNAPSHOT_WRITE_MS);
  }

  /** Writes what was recorded now (waiting for a write in progress); failures are logged once each. */
  flush(): Promise<void> {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    const text = JSON.stringify(Object.fromEntries(this.#latest), null, 2);
    this.#writing = this.#writing.then(async () => {
      const temp = `${this.#path}.tmp-${crypto.randomUUID()}`;
      try {
        await Deno.writeTextFile(temp, text);
        await Deno.rename(temp, this.#path);
        this.#lastError = "";
      } catch (error) {
        await Deno.remove(temp).catch(() => {});
        const message = (error as Error).message;
        if (message !== this.#lastError) {
          this.#log.warn("cannot write the xDS snapshot (LOCAL_XDS_GENERATOR_CONFIG_SAVE_PATH)", {
            path: this.#path,
            error: message,
          });
          this.#lastError = message;
        }
      }
    });
    return this.#writing;
  }
}
