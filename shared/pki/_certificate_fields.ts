import type { x509 } from "./_x509.ts";

/** How far back `notBefore` is set, so peers whose clocks lag a little accept a brand-new certificate. */
export const CLOCK_SKEW_ALLOWANCE_MS = 60_000;

/** A random positive 128-bit serial number in hex (RFC 5280 allows up to 20 octets; positive means top bit 0). */
export function randomSerialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01; // never a leading zero octet, which DER would have to strip
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Validity from `now - skew` to `now + ttlMs`; throws RangeError naming `what` unless ttlMs is positive. */
export function validityPeriod(now: Date, ttlMs: number, what: string): { notBefore: Date; notAfter: Date } {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`Invalid TTL for ${what}: expected a positive number of milliseconds, got ${ttlMs}`);
  }
  return {
    notBefore: new Date(now.getTime() - CLOCK_SKEW_ALLOWANCE_MS),
    notAfter: new Date(now.getTime() + ttlMs),
  };
}

/** A subject name with the given organization and common name; empty when both are absent. */
export function subjectName(org: string | undefined, commonName: string | undefined): x509.JsonName {
  const name: x509.JsonName = [];
  if (org) name.push({ O: [org] });
  if (commonName) name.push({ CN: [commonName] });
  return name;
}
