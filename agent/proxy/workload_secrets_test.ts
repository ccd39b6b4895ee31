import "reflect-metadata";
import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { silentLogger } from "@mesh/shared/log/logger";
import { opensslOk } from "@mesh/shared/testing/openssl";
import { needs, OPENSSL } from "@mesh/shared/testing/system_tools";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { WorkloadSecrets } from "./workload_secrets.ts";
import { recordingSigner } from "./_test_ca.ts";

Deno.test("WorkloadSecrets waits a random part of INITIAL_BACKOFF_MSEC before a renewal's first CSR", async () => {
  const clock = FakeTimers.createClock(0);
  const signer = await recordingSigner();
  const secrets = new WorkloadSecrets({
    signer,
    ttlSeconds: 600,
    graceRatio: 0.5,
    checkIntervalMs: 60_000,
    ecdsa: true,
    initialBackoffMs: 1_000,
    random: () => 0.5,
    timers: timersOf(clock),
    log: silentLogger,
  });
  const issued = new Promise((resolve) => secrets.onChange(resolve));
  try {
    secrets.start();
    await clock.tickAsync(499);
    assert.equal(signer.csrs.length, 0, "no CSR inside the drawn jitter");
    await clock.tickAsync(1);
    await issued;
    assert.equal(signer.csrs.length, 1);
  } finally {
    secrets.close();
  }
});

Deno.test({
  name: "WorkloadSecrets names TRUST_DOMAIN, the namespace and SERVICE_ACCOUNT in the CSR",
  ...needs(OPENSSL),
}, async () => {
  const signer = await recordingSigner();
  const secrets = new WorkloadSecrets({
    signer,
    ttlSeconds: 600,
    graceRatio: 0.5,
    checkIntervalMs: 60_000,
    ecdsa: true,
    csrUri: "spiffe://example.org/ns/shop/sa/cart",
    log: silentLogger,
  });
  await secrets.renew();
  const text = await opensslOk(["req", "-noout", "-text"], signer.csrs[0]);
  assert.match(text, /URI:spiffe:\/\/example\.org\/ns\/shop\/sa\/cart/);
});
