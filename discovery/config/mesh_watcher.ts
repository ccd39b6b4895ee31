import { type Logger, silentLogger } from "@mesh/shared/log/logger";
import { defaultMeshConfig, type MeshConfig } from "@mesh/shared/config/mesh/mesh_config";
import {
  defaultMeshNetworks,
  type MeshNetworks,
  parseMeshNetworks,
} from "@mesh/shared/config/mesh/mesh_networks";
import { parseMeshConfig } from "@mesh/shared/config/mesh/parse_mesh_config";
import type { Timers } from "@mesh/shared/time/timers";
import { WatchedFile } from "./watched_file.ts";
import type { Metrics } from "@mesh/shared/metrics/metrics";

/** Options of {@link MeshWatcher}. */
export interface MeshWatcherOptions {
  /** `--meshConfig`; empty or absent: the default mesh config, nothing watched. */
  readonly meshConfigFile?: string;
  /** `--networksConfig`; empty or absent: no networks, nothing watched. */
  readonly networksFile?: string;
  /** Where loads, missing files and errors are logged; silent when absent. */
  readonly logger?: Logger;
  /** Where a lost file is counted (`discovery_config_source_lost`); nothing is recorded when absent. */
  readonly metrics?: Metrics;
  /** Quiet period after a change before the file is read again (default 100 ms). */
  readonly debounceMs?: number;
  /** How often to look for a parent directory that does not exist yet (default 5 s). */
  readonly dirPollMs?: number;
  /** Timer functions for the debounce and directory polling; the globals when absent. */
  readonly timers?: Timers;
}

/** Which file changed, and the effective configuration after the change. */
export interface MeshChangeEvent {
  /** The file whose change caused the event. */
  readonly which: "meshConfig" | "meshNetworks";
  /** The mesh config in effect after the change. */
  readonly mesh: MeshConfig;
  /** The mesh networks in effect after the change. */
  readonly networks: MeshNetworks;
}

/** Receives mesh config changes; the caller turns each into a full push. */
export type MeshChangeHandler = (event: MeshChangeEvent) => void;

/** State of one watched file, for the debug interface. */
export interface MeshFileStatus {
  /** Path of the file, as given. */
  readonly file: string;
  /** True once the file was loaded; false while it is missing or has never been valid. */
  readonly loaded: boolean;
  /** Problems with its current content, each as `file:line: field.path: message`. */
  readonly errors: readonly string[];
  /** True while the file, once loaded, is missing: its last config is served and the server is not ready. */
  readonly lost: boolean;
}

/**
 * Watches the mesh config and mesh networks files. A missing file means the defaults (logged at info once);
 * a bad file keeps the last good config (its errors logged once, with file and line); each effective change
 * is announced to subscribers. Files may appear later and may be replaced by rename or volume link swaps.
 */
export class MeshWatcher {
  readonly #logger: Logger;
  readonly #handlers = new Set<MeshChangeHandler>();
  readonly #mesh: WatchedFile<MeshConfig> | undefined;
  readonly #networks: WatchedFile<MeshNetworks> | undefined;
  readonly #defaultMesh = defaultMeshConfig();
  readonly #defaultNetworks = defaultMeshNetworks();

  /** Sets up the watched files from `options`; nothing is read or watched until started. */
  constructor(options: MeshWatcherOptions = {}) {
    this.#logger = options.logger ?? silentLogger;
    const common = {
      logger: this.#logger,
      debounceMs: options.debounceMs ?? 100,
      dirPollMs: options.dirPollMs ?? 5000,
      ...(options.timers && { timers: options.timers }),
    };
    const lostGauge = (source: string) => {
      const gauge = options.metrics?.gauge("discovery_config_source_lost");
      gauge?.set({ source }, 0);
      return (lost: boolean) => gauge?.set({ source }, lost ? 1 : 0);
    };
    if (options.meshConfigFile) {
      this.#mesh = new WatchedFile<MeshConfig>({
        ...common,
        onLost: lostGauge("meshConfig"),
        label: "mesh config",
        path: options.meshConfigFile,
        parse: (text, file) => {
          const { config, warnings } = parseMeshConfig(text, file);
          return { value: config, warnings };
        },
        initial: this.#defaultMesh,
        onChange: () => this.#notify("meshConfig"),
      });
    }
    if (options.networksFile) {
      this.#networks = new WatchedFile<MeshNetworks>({
        ...common,
        onLost: lostGauge("meshNetworks"),
        label: "mesh networks",
        path: options.networksFile,
        parse: (text, file) => {
          const { networks, warnings } = parseMeshNetworks(text, file);
          return { value: networks, warnings };
        },
        initial: this.#defaultNetworks,
        onChange: () => this.#notify("meshNetworks"),
      });
    }
  }

  /**
   * Loads both files once and starts watching them. A missing file means the defaults. A file that exists
   * but is invalid is logged and the defaults kept, unless `requireValid` (startup), where it throws
   * {@link MeshConfigError}-style issues naming the file and nothing is watched.
   */
  async start(options: { readonly requireValid?: boolean } = {}): Promise<void> {
    await this.reload();
    if (options.requireValid) {
      const problems = [this.#mesh, this.#networks].flatMap((f) => f?.errors ?? []);
      if (problems.length > 0) {
        throw new Error(
          `Invalid mesh config file (--meshConfig/--networksConfig): ${problems.join("; ")}; ` +
            "fix the file or remove it to use the defaults",
        );
      }
    }
    await Promise.all([this.#mesh?.start(), this.#networks?.start()]);
  }

  /** Reads both files now. */
  async reload(): Promise<void> {
    await Promise.all([this.#mesh?.load(), this.#networks?.load()]);
  }

  /** Stops watching. */
  async stop(): Promise<void> {
    await Promise.all([this.#mesh?.stop(), this.#networks?.stop()]);
  }

  /** The effective mesh config (for the generators and `/debug/mesh`). */
  current(): MeshConfig {
    return this.#mesh?.value ?? this.#defaultMesh;
  }

  /** The effective mesh networks. */
  networks(): MeshNetworks {
    return this.#networks?.value ?? this.#defaultNetworks;
  }

  /** Status of each watched file. */
  status(): MeshFileStatus[] {
    return [this.#mesh, this.#networks]
      .filter((f) => f !== undefined)
      .map((f) => ({ file: f.path, loaded: f.loaded, errors: f.errors, lost: f.lost }));
  }

  /** Subscribes to effective changes; returns a function that unsubscribes. */
  onChange(handler: MeshChangeHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  #notify(which: MeshChangeEvent["which"]): void {
    const event: MeshChangeEvent = { which, mesh: this.current(), networks: this.networks() };
    for (const handler of [...this.#handlers]) {
      try {
        handler(event);
      } catch (error) {
        this.#logger.error(`mesh config change handler failed: ${(error as Error).message}`, { which });
      }
    }
  }
}
