/**
 * `host:port` addresses as settings and resolv.conf write them.
 *
 * @module
 */

/** Splits `host:port` or `[v6]:port`; the host comes without brackets. */
export function splitHostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(address.slice(at + 1)) };
}
