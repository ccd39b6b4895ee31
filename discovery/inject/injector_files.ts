/**
 * The injector's files as the reference mounts them (`./var/lib/mesh/inject/config` and `values`), watched: a
 * file that appears, changes or is replaced is read again; a bad one is refused with its reason, logged once,
 * and the last good content stays in use.
 * @module
 */
import type { Logger } from "@mesh/shared/log/logger";
import type { Timers } from "@mesh/shared/time/timers";
import { WatchedFile } from "../config/watched_file.ts";
import { type InjectorConfig, parseInjectorConfig, parseInjectorValues } from "./inject_config.ts";
import type { InjectorSources, InjectorState } from "./inject_review.ts";

/** A file's parsed content with the text and path it came from. */
interface Parsed<T> {
  readonly parsed: T;
  readonly text: string;
  readonly file: string;
}

/** Where the reference mounts the injector config, relative to the working directory. */
export const DEFAULT_INJECT_CONFIG_FILE = "./var/lib/mesh/inject/config";
/** Where the reference mounts the chart values, relative to the working directory. */
export const DEFAULT_INJECT_VALUES_FILE = "./var/lib/mesh/inject/values";

/** Options of {@link InjectorFiles}. */
export interface InjectorFilesOptions {
  readonly configFile?: string;
  readonly valuesFile?: string;
  /** What the templates' `env` function reads (`ENABLE_LEGACY_FSGROUP_INJECTION`, …). */
  readonly environment: Readonly<Record<string, string>>;
  /** The effective mesh config as JSON, read at each injection. */
  readonly mesh: () => Readonly<Record<string, unknown>>;
  readonly logger: Logger;
  readonly debounceMs?: number;
  readonly dirPollMs?: number;
  readonly timers?: Timers;
}

/** The injector config and values files, watched; `state()` is what the webhook injects with. */
export class InjectorFiles {
  readonly #config: WatchedFile<Parsed<InjectorConfig> | undefined>;
  readonly #values: WatchedFile<Parsed<Readonly<Record<string, unknown>>> | undefined>;
  readonly #mesh: () => Readonly<Record<string, unknown>>;
  readonly #environment: Readonly<Record<string, string>>;
  /** The sources of the last state, kept while both files are unchanged so a worker sees the same object. */
  #sources: InjectorSources | undefined;

  constructor(options: InjectorFilesOptions) {
    const common = {
      logger: options.logger,
      debounceMs: options.debounceMs ?? 100,
      dirPollMs: options.dirPollMs ?? 5000,
      initial: undefined,
      onChange: () => {},
      ...(options.timers && { timers: options.timers }),
    };
    this.#config = new WatchedFile<Parsed<InjectorConfig> | undefined>({
      ...common,
      label: "injector config",
      path: options.configFile ?? DEFAULT_INJECT_CONFIG_FILE,
      parse: (text, file) => ({
        value: { parsed: parseInjectorConfig(text, file, options.environment), text, file },
        warnings: [],
      }),
    });
    this.#values = new WatchedFile<Parsed<Readonly<Record<string, unknown>>> | undefined>({
      ...common,
      label: "injector values",
      path: options.valuesFile ?? DEFAULT_INJECT_VALUES_FILE,
      parse: (text, file) => ({
        value: { parsed: parseInjectorValues(text, file), text, file },
        warnings: [],
      }),
    });
    this.#mesh = options.mesh;
    this.#environment = options.environment;
  }

  /** Reads both files once and starts watching them. */
  async start(): Promise<void> {
    await this.reload();
    this.#config.start();
    this.#values.start();
  }

  /** Reads both files now. */
  async reload(): Promise<void> {
    await Promise.all([this.#config.load(), this.#values.load()]);
  }

  /** The inputs to inject with; undefined until both files have loaded once. */
  state(): InjectorState | undefined {
    const config = this.#config.value;
    const values = this.#values.value;
    if (config === undefined || values === undefined) return undefined;
    let sources = this.#sources;
    if (sources?.configText !== config.text || sources.valuesText !== values.text) {
      sources = this.#sources = {
        configText: config.text,
        configFile: config.file,
        valuesText: values.text,
        valuesFile: values.file,
        environment: this.#environment,
      };
    }
    return { config: config.parsed, values: values.parsed, mesh: this.#mesh(), sources };
  }

  /** The problems of each file's current content (empty when both are good). */
  errors(): readonly string[] {
    return [...this.#config.errors, ...this.#values.errors];
  }

  /** Stops watching. */
  async stop(): Promise<void> {
    await Promise.all([this.#config.stop(), this.#values.stop()]);
  }
}
