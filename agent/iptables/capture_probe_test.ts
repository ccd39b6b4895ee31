import assert from "node:assert/strict";

import { CaptureValidationError, runCaptureProbe } from "./capture_probe.ts";
import { iptablesConfig } from "./config.ts";
import { chooseProbeTarget } from "./probe_target.ts";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";

/** Ports the kernel just handed out, so the probe does not collide with anything running. */
function freePorts(count: number): number[] {
  const listeners = Array.from({ length: count }, () => Deno.listen({ hostname: "127.0.0.1", port: 0 }));
  const ports = listeners.map((listener) => (listener.addr as Deno.NetAddr).port);
  listeners.forEach((listener) => listener.close());
  return ports;
}

function probeConfig() {
  const [proxyPort, inboundCapturePort, probePort] = freePorts(3);
  return iptablesConfig({ proxyUids: [0], proxyPort, inboundCapturePort, probePort, probeTimeoutMs: 30_000 });
}

Deno.test("Without capture rules the probe reaches the probe port directly and fails with the reason", async () => {
  const config = probeConfig();
  const target = chooseProbeTarget(config, { uid: 0, gid: 0 });
  await assert.rejects(runCaptureProbe(config, target, new RecordingLogger()), (error: Error) => {
    assert.ok(error instanceof CaptureValidationError);
    assert.equal(
      error.message.split(" (")[0],
      `Iptables validation failed: the probe connection to 127.0.0.6:${config.probePort} reached port ` +
        `${config.probePort} directly instead of being redirected to port ${config.inboundCapturePort}`,
    );
    return true;
  });
  // Every listener was closed: the ports can be bound again.
  for (const port of [config.proxyPort, config.inboundCapturePort]) {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  }
});

Deno.test("A redirect target already in use fails with a clear message", async () => {
  const config = probeConfig();
  const busy = Deno.listen({ hostname: "127.0.0.1", port: config.proxyPort });
  try {
    await assert.rejects(
      runCaptureProbe(config, chooseProbeTarget(config, { uid: 0, gid: 0 }), new RecordingLogger()),
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${config.proxyPort} \\(redirect target\\): it is in use`),
    );
  } finally {
    busy.close();
  }
});
