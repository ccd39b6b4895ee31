import { formatDuration } from "../../flags/duration.ts";

/**
 * Renders a mesh config, proxy config or mesh networks value as JSON for `/debug/mesh`: durations (the
 * only bigints in these models) print as Go durations such as `10s` and `100ms`.
 */
export function meshConfigToJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, (_key, v) => typeof v === "bigint" ? formatDuration(v) : v, indent);
}
