/**
 * How configuration enters mesh-discovery: the in-memory config store, the `--configDir` file source, and
 * the watcher of the `--meshConfig` and `--networksConfig` files.
 * @module
 */
export * from "./memory_config_store.ts";
export * from "./file_config_source.ts";
export * from "./mesh_watcher.ts";
export * from "./config_dir_settings.ts";
export type { ConfigWarning, DocumentRejection, RejectionReason } from "./config_file_load.ts";
export type { Timers } from "@mesh/shared/time/timers";
export type {
  ConfigEvent,
  ConfigEventHandler,
  ConfigEventType,
  ConfigStore,
  RejectedConfig,
  WritableConfigStore,
} from "../model/config_store.ts";
export type { GroupVersionKind, Resource, ResourceMeta, SourcePosition } from "@mesh/shared/config/resource";
