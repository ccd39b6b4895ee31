/**
 * The CA of the CA benchmarks: a self-signed root made in memory (no plugged-in files), as a server without
 * `ROOT_CA_DIR` files has.
 *
 * @module
 */
import { silentLogger } from "../shared/log/logger.ts";
import { CaKeyStore } from "../discovery/ca/ca_keys.ts";

/** A key store with a fresh self-signed root for `cluster.local`. */
export function openBenchCaKeys(): Promise<CaKeyStore> {
  return CaKeyStore.open({
    rootCaDir: `/tmp/mesh-no-such-ca-dir-${crypto.randomUUID()}`,
    trustDomain: "cluster.local",
    selfSignedTtlMs: 365 * 24 * 3_600_000,
    rsaKeySize: 2048,
    gracePercent: 20,
    now: () => new Date(),
    log: silentLogger,
  });
}
