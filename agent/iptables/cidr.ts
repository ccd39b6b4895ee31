/**
 * IPv4/IPv6 addresses and CIDR ranges as iptables sees them: parsed strictly, masked to their network
 * address and printed canonically (`10.1.2.3/8` → `10.0.0.0/8`, `2001:DB8:0:0::/32` → `2001:db8::/32`).
 * @module
 */

/** A parsed CIDR range, masked to its network address. */
export interface Cidr {
  /** Address family: 4 for IPv4, 6 for IPv6. */
  readonly family: 4 | 6;
  /** The network address as bytes (4 or 16). */
  readonly bytes: readonly number[];
  /** Prefix length in bits: 0 to 32 for IPv4, 0 to 128 for IPv6. */
  readonly prefix: number;
  /** True when the address as written (before masking) is a loopback address. */
  readonly loopback: boolean;
  /** Canonical text, e.g. `10.0.0.0/8` or `fd00::/8`. */
  readonly text: string;
}

/** Parses a dotted-quad IPv4 address into 4 bytes, or returns undefined. */
export function parseIpv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    // Leading zeros are rejected as Go's net.ParseIP does: they read as octal in some tools.
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes.push(value);
  }
  return bytes;
}

/** Parses an IPv6 address (with `::` and an optional embedded IPv4 tail) into 16 bytes, or returns undefined. */
export function parseIpv6(text: string): number[] | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === "") return [];
    const words: number[] = [];
    const pieces = half.split(":");
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseIpv4(piece);
        if (!v4) return undefined;
        words.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
        words.push(parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return words;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 2 && head.length + tail.length > 7) return undefined;
  if (halves.length === 1 && head.length !== 8) return undefined;
  const words = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  return words.flatMap((word) => [word >> 8, word & 0xff]);
}

/** Formats 4 or 16 address bytes canonically (RFC 5952 for IPv6: lower case, longest zero run as `::`). */
export function formatIp(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join(".");
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((bytes[i] << 8) | bytes[i + 1]);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (list: number[]) => list.map((word) => word.toString(16)).join(":");
  if (bestStart < 0) return hex(words);
  return `${hex(words.slice(0, bestStart))}::${hex(words.slice(bestStart + bestLength))}`;
}

/** Parses an IP address of either family into bytes and family, or returns undefined. */
export function parseIp(text: string): { family: 4 | 6; bytes: number[] } | undefined {
  const v4 = parseIpv4(text);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = parseIpv6(text);
  if (v6) return { family: 6, bytes: v6 };
  return undefined;
}

/** True when the address is loopback: 127.0.0.0/8 or ::1. */
export function isLoopback(family: 4 | 6, bytes: readonly number[]): boolean {
  if (family === 4) return bytes[0] === 127;
  return bytes.every((byte, i) => byte === (i === 15 ? 1 : 0));
}

/** Parses `address/prefix`; throws RangeError naming the text when it is not a valid CIDR range. */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf("/");
  const ip = slash < 0 ? undefined : parseIp(text.slice(0, slash));
  const prefixText = slash < 0 ? "" : text.slice(slash + 1);
  const maxPrefix = ip?.family === 4 ? 32 : 128;
  if (!ip || !/^(0|[1-9]\d{0,2})$/.test(prefixText) || Number(prefixText) > maxPrefix) {
    throw new RangeError(
      `Invalid CIDR "${text}": expected an address and prefix length such as "10.0.0.0/8" or "fd00::/8"`,
    );
  }
  const prefix = Number(prefixText);
  const bytes = maskBytes(ip.bytes, prefix);
  return Object.freeze({
    family: ip.family,
    bytes: Object.freeze(bytes),
    prefix,
    loopback: isLoopback(ip.family, ip.bytes),
    text: `${formatIp(bytes)}/${prefix}`,
  });
}

/** True when the address (of the same family) lies inside the range. */
export function cidrContains(cidr: Cidr, bytes: readonly number[]): boolean {
  if (bytes.length !== cidr.bytes.length) return false;
  const masked = maskBytes(bytes, cidr.prefix);
  return masked.every((byte, i) => byte === cidr.bytes[i]);
}

function maskBytes(bytes: readonly number[], prefix: number): number[] {
  return bytes.map((byte, i) => {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    return byte & ((0xff << (8 - bits)) & 0xff);
  });
}
