/** A host and port to listen on, parsed from Go's `host:port` form (`:8080`, `127.0.0.1:0`, `[::1]:15010`). */
export interface ListenAddress {
  /** Host name or IP to bind; `0.0.0.0` when the address gave no host. */
  readonly hostname: string;
  /** Port to bind, 0 to 65535; 0 picks a free port. */
  readonly port: number;
}

/** Parses `addr` as given to `flag`; an empty host means every interface. Throws RangeError naming the flag. */
export function parseListenAddress(addr: string, flag: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new RangeError(`Invalid ${flag} "${addr}": expected host:port such as ":8080" or "127.0.0.1:8080"`);
  }
  const host = m[1] ?? m[2];
  return { hostname: host === "" ? "0.0.0.0" : host, port };
}

/** Formats an address for logs and URLs (`127.0.0.1:8080`, `[::1]:8080`). */
export function formatAddress(hostname: string, port: number): string {
  return hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
}
