/**
 * Reads what the DNS proxy needs of `/etc/resolv.conf`: the upstream name servers (port 53) and the search
 * domains, as Go's resolver (which Istio's agent uses) reads them: the last `search` or `domain` line wins,
 * comments start with `#` or `;`, unknown lines are ignored. One extension: a `nameserver` may name its port
 * (`127.0.0.1:5353`, `[::1]:5353`), for a local resolver off port 53 (and tests); resolvers that do not know
 * the form ignore the line.
 *
 * @module
 */

/** The upstream servers and search domains of a resolv.conf. */
export interface ResolvConf {
  /** `host:port` of each name server, in file order; IPv6 hosts in brackets. */
  readonly servers: readonly string[];
  /** Search domains without a trailing dot, in file order. */
  readonly search: readonly string[];
}

/** Parses the text of a resolv.conf. */
export function parseResolvConf(text: string): ResolvConf {
  const servers: string[] = [];
  let search: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/[#;].*$/, "").trim();
    const [keyword, ...values] = line.split(/\s+/);
    if (keyword === "nameserver" && values[0] !== undefined) {
      const host = values[0].replace(/%[^\]]*/, "");
      const withPort = /^(\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:.]+\]):\d{1,5}$/.test(host);
      servers.push(withPort ? host : host.includes(":") ? `[${host}]:53` : `${host}:53`);
    } else if (keyword === "search" || keyword === "domain") {
      search = values.filter((v) => v !== "").map((v) => v.replace(/\.$/, ""));
    }
  }
  return { servers, search };
}
