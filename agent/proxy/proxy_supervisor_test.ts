import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { timersOf } from "@mesh/shared/testing/fake_timers";
import { waitFor } from "@mesh/shared/testing/wait_for";
import { silentLogger } from "@mesh/shared/log/logger";
import {
  MAX_QUICK_EXITS,
  proxyArguments,
  ProxyBinaryError,
  ProxySupervisor,
  type SupervisorOptions,
} from "./proxy_supervisor.ts";

const BASE: SupervisorOptions = {
  binaryPath: "/usr/local/bin/envoy",
  bootstrapPath: "/etc/mesh/proxy/envoy-rev0.json",
  drainSeconds: 45,
  parentShutdownSeconds: 60,
  serviceCluster: "mesh-proxy",
  serviceNode: "sidecar~10.0.0.1~app-1.example~example.svc.cluster.local",
  logLevel: "warning",
  componentLogLevel: "misc:error",
  concurrency: 0,
  adminPort: 15000,
  role: "sidecar",
  terminationDrainMs: 5_000,
  log: silentLogger,
};

Deno.test("proxyArguments names the bootstrap, epoch, drain times, cluster, node and log levels", () => {
  assert.deepEqual(proxyArguments(BASE, 2), [
    "-c",
    "/etc/mesh/proxy/envoy-rev0.json",
    "--restart-epoch",
    "2",
    "--drain-time-s",
    "45",
    "--parent-shutdown-time-s",
    "60",
    "--service-cluster",
    "mesh-proxy",
    "--service-node",
    "sidecar~10.0.0.1~app-1.example~example.svc.cluster.local",
    "--local-address-ip-version",
    "v4",
    "--log-level",
    "warning",
    "--component-log-level",
    "misc:error",
  ]);
  const args = proxyArguments({ ...BASE, concurrency: 2, componentLogLevel: "" }, 0);
  assert.deepEqual(args.slice(-2), ["--concurrency", "2"]);
  assert.ok(!args.includes("--component-log-level"));
});

Deno.test("A missing proxy binary stops the first start with an error naming the path and the setting", () => {
  const supervisor = new ProxySupervisor({ ...BASE, binaryPath: "/nonexistent/envoy" });
  assert.throws(
    () => supervisor.start(),
    (error: Error) =>
      error instanceof ProxyBinaryError &&
      /"\/nonexistent\/envoy" \(ProxyConfig binaryPath\)/.test(error.message),
  );
});

Deno.test("The supervisor gives up after repeated quick exits and says why", async () => {
  const gaveUp = Promise.withResolvers<Error>();
  // `sh -c <bootstrap path>` runs the "bootstrap path" as a command: a proxy that exits at once.
  const supervisor = new ProxySupervisor({
    ...BASE,
    binaryPath: "sh",
    bootstrapPath: "exit 3",
    restartBackoffMs: { first: 1, max: 5 },
    onGiveUp: (error) => gaveUp.resolve(error),
  });
  supervisor.start();
  const error = await gaveUp.promise;
  assert.match(error.message, new RegExp(`exited ${MAX_QUICK_EXITS} times in a row`));
  assert.equal(supervisor.restarts, MAX_QUICK_EXITS);
  await supervisor.stop();
});

Deno.test("The supervisor restarts an exited proxy after its backoff, on its injected clock", async () => {
  const clock = FakeTimers.createClock(0);
  const supervisor = new ProxySupervisor({
    ...BASE,
    binaryPath: "sh",
    bootstrapPath: "exit 3",
    restartBackoffMs: { first: 1_000, max: 5_000 },
    timers: timersOf(clock),
  });
  try {
    supervisor.start();
    await waitFor(() => supervisor.restarts === 1, "the first exit");
    assert.equal(clock.countTimers(), 1, "the restart waits for its backoff");
    clock.tick(999);
    assert.equal(clock.countTimers(), 1, "not yet");
    clock.tick(1);
    await waitFor(() => supervisor.restarts === 2, "the restarted proxy's exit");
    assert.equal(clock.countTimers(), 1, "the next restart, after a doubled backoff");
  } finally {
    await supervisor.stop();
  }
  assert.equal(clock.countTimers(), 0, "no restart after stop");
});
