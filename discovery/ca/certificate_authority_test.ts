import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { EnvSettings } from "@mesh/shared/env/env_settings";
import { silentLogger } from "@mesh/shared/log/logger";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { caSettingsFromEnv } from "./ca_settings.ts";
import { CertificateAuthority } from "./certificate_authority.ts";

const DAY = 24 * 3_600_000;
const HOUR = 3_600_000;

/** A self-signed CA of a 100-day root, checked hourly, on `clock`. */
function selfSignedCa(clock: FakeTimers.Clock): Promise<CertificateAuthority> {
  const settings = {
    ...caSettingsFromEnv(new EnvSettings("discovery", {})),
    rootCaDir: `/tmp/mesh-no-such-ca-dir-${crypto.randomUUID()}`,
    trustDomain: "cluster.local",
    selfSignedTtlMs: 100 * DAY,
    rsaKeySize: 2048,
    gracePercent: 20,
    checkIntervalMs: HOUR,
    jitter: false,
  };
  return CertificateAuthority.create(settings, {
    log: silentLogger,
    now: () => new Date(clock.now),
    timers: timersOf(clock),
  });
}

Deno.test("The CA checks its root on its own clock and rotates it when due, until closed", async () => {
  const clock = FakeTimers.createClock(Date.parse("2026-01-01T00:00:00Z"));
  const ca = await selfSignedCa(clock);
  try {
    const first = ca.rootsPem();
    let changes = 0;
    ca.onRootsChanged(() => void changes++);
    ca.startRotation();
    assert.equal(clock.countTimers(), 1, "the first check");
    // 81 days on, less than 20% of the root's life is left: the next hourly check rotates it.
    clock.setSystemTime(clock.now + 81 * DAY);
    clock.tick(HOUR);
    await waitFor(() => changes === 1, "the rotated root");
    assert.notEqual(ca.rootsPem(), first);
    assert.ok(ca.rootsPem().endsWith(first), "the old root is still trusted");
    await waitFor(() => clock.countTimers() === 1, "the next check");
  } finally {
    ca.close();
  }
  assert.equal(clock.countTimers(), 0, "no check after close");
});

Deno.test("The CA builds its caller authenticators once: the signing service and XDS_AUTH share them", async () => {
  const clock = FakeTimers.createClock(0);
  const ca = await selfSignedCa(clock);
  assert.equal(ca.authenticators, ca.authenticators);
  assert.ok(Object.isFrozen(ca.authenticators));
  assert.deepEqual(ca.authenticators.map((a) => a.constructor.name), [
    "ClientCertAuthenticator",
    "JwtAuthenticator",
  ]);
});
