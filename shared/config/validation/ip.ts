const IPV4_OCTET = /^(0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/** Reports whether `s` is a dotted-decimal IPv4 address (leading zeros are rejected as ambiguous). */
export function isIPv4(s: string): boolean {
  const parts = s.split(".");
  return parts.length === 4 && parts.every((p) => IPV4_OCTET.test(p) && Number(p) <= 255);
}

/** Reports whether `s` is an IPv6 address in text form (with `::` compression and an optional IPv4 tail). */
export function isIPv6(s: string): boolean {
  if (!s.includes(":")) return false;
  const halves = s.split("::");
  if (halves.length > 2) return false;
  const groups = (text: string): string[] => (text === "" ? [] : text.split(":"));
  const all = [...groups(halves[0]), ...(halves.length === 2 ? groups(halves[1]) : [])];
  let count = all.length;
  const last = all[all.length - 1];
  if (last !== undefined && last.includes(".")) {
    if (!isIPv4(last)) return false;
    all.pop();
    count += 1; // an IPv4 tail fills two groups
  }
  if (!all.every((g) => HEX_GROUP.test(g))) return false;
  return halves.length === 2 ? count <= 7 : count === 8;
}

/** Reports whether `s` is an IPv4 or IPv6 address. */
export function isIp(s: string): boolean {
  return isIPv4(s) || isIPv6(s);
}

/** Checks an IP address or a CIDR block (`10.0.0.0/8`, `2001:db8::/32`); returns a message when invalid. */
export function checkIpSubnet(s: string): string | undefined {
  const slash = s.indexOf("/");
  if (slash < 0) return isIp(s) ? undefined : `"${s}" is not a valid IP address`;
  const addr = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  const max = isIPv4(addr) ? 32 : isIPv6(addr) ? 128 : -1;
  if (max < 0 || !/^(0|[1-9][0-9]*)$/.test(bits) || Number(bits) > max) {
    return `"${s}" is not a valid CIDR block`;
  }
  return undefined;
}
