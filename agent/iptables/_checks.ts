/** Value checks shared by the typed and the flag-based config constructors. Private to this module. */

import { type Cidr, parseCidr } from "./cidr.ts";

/** A TCP port from 1 to 65535. */
export function checkPort(value: number, where: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new RangeError(`Invalid ${where} "${value}": expected a port from 1 to 65535`);
  }
  return value;
}

/** A uid or gid. */
export function checkId(value: number, where: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 4294967294) {
    throw new RangeError(`Invalid ${where} "${value}": expected a numeric id from 0 to 4294967294`);
  }
  return value;
}

/** Parses a CIDR, naming `where` when invalid. */
export function cidrOf(text: string, where: string): Cidr {
  try {
    return parseCidr(text);
  } catch (cause) {
    throw new RangeError(
      `Invalid ${where} entry "${text}": expected a CIDR range such as "10.0.0.0/8" or "fd00::/8"`,
      { cause },
    );
  }
}

/** Interface names as the kernel allows them: 1–15 characters, no whitespace, `/` or quotes; `+` only last. */
export function checkInterface(name: string, where = "virtualInterfaces"): string {
  if (!/^[^\s/"'+]{1,14}\+?$|^[^\s/"'+]{15}$/.test(name)) {
    throw new RangeError(
      `Invalid ${where} entry "${name}": expected an interface name of 1 to 15 characters`,
    );
  }
  return name;
}

/** A non-zero 32-bit packet mark, decimal or 0x hex. */
export function checkMark(text: string, where: string): string {
  const value = /^0x[0-9a-f]{1,8}$/i.test(text)
    ? parseInt(text, 16)
    : /^\d{1,10}$/.test(text)
    ? Number(text)
    : NaN;
  if (!(value >= 1 && value <= 0xffffffff)) {
    throw new RangeError(
      `Invalid ${where} "${text}": expected a packet mark from 1 to 4294967295 (decimal or 0x hex)`,
    );
  }
  return text;
}

/** Route tables 253–255 (default, main, local) belong to the kernel: pointing the mark there breaks routing. */
export function checkRouteTable(text: string, where: string): string {
  const value = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(value >= 1 && value <= 0xffffffff) || value === 253 || value === 254 || value === 255) {
    throw new RangeError(
      `Invalid ${where} "${text}": expected a routing table number from 1 to 4294967295 other than 253, 254, 255`,
    );
  }
  return text;
}
