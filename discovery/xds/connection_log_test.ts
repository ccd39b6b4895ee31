import assert from "node:assert/strict";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { CONNECTION_LOG_LINES_PER_MINUTE, ConnectionLog, peerHost } from "./connection_log.ts";

Deno.test("ConnectionLog logs a peer address's first connections each minute, then says how many it passed over", () => {
  let now = 0;
  const logger = new RecordingLogger();
  const log = new ConnectionLog(logger, () => now);
  const streams = CONNECTION_LOG_LINES_PER_MINUTE + 50;
  for (let i = 0; i < streams; i++) {
    const stream = { id: `a-${i}`, peer: `10.0.0.1:${40000 + i}` };
    log.connected(stream, { protocol: "sotw" });
    log.disconnected(stream);
  }
  log.connected({ id: "b-1", peer: "10.0.0.2:40000" }, { protocol: "sotw" });
  const count = (msg: string) => logger.lines.filter((l) => l.msg === msg).length;
  assert.equal(
    count("proxy connected"),
    CONNECTION_LOG_LINES_PER_MINUTE + 1,
    "another address has its own budget",
  );
  assert.equal(count("proxy disconnected"), CONNECTION_LOG_LINES_PER_MINUTE);
  now = 60_000;
  log.connected({ id: "a-next", peer: "10.0.0.1:50000" }, { protocol: "delta" });
  assert.deepEqual(logger.lines.at(-1), {
    level: "info",
    msg: "proxy connected",
    fields: { connection: "a-next", protocol: "delta", peer: "10.0.0.1:50000", notLogged: 50 },
  });
});

Deno.test("ConnectionLog counts a disconnection against the address the stream connected from", () => {
  const logger = new RecordingLogger();
  const log = new ConnectionLog(logger, () => 0);
  for (let i = 0; i < CONNECTION_LOG_LINES_PER_MINUTE; i++) {
    log.connected({ id: `a-${i}`, peer: `10.0.0.1:${40000 + i}` }, {});
  }
  // grpc-js names a stream's peer "unknown" once its connection is gone: streams it never saw connect spend
  // that name's budget, and the ones it did still count against their own address.
  for (let i = 0; i < CONNECTION_LOG_LINES_PER_MINUTE; i++) {
    log.disconnected({ id: `other-${i}`, peer: "unknown" });
  }
  for (let i = 0; i < 3; i++) log.disconnected({ id: `a-${i}`, peer: "unknown" });
  const disconnected = logger.lines.filter((l) => l.msg === "proxy disconnected");
  assert.equal(disconnected.length, CONNECTION_LOG_LINES_PER_MINUTE + 3);
  assert.deepEqual(disconnected.slice(-3).map((l) => l.fields?.connection), ["a-0", "a-1", "a-2"]);
});

Deno.test("peerHost drops the port of grpc-js's peer names and keeps what has none", () => {
  assert.deepEqual(
    ["10.0.0.1:5000", "[::1]:5000", "[fd00::1]:15010", "/var/run/mesh/xds.sock", "unknown", "host.local:80"]
      .map(
        peerHost,
      ),
    ["10.0.0.1", "::1", "fd00::1", "/var/run/mesh/xds.sock", "unknown", "host.local"],
  );
});

Deno.test("ConnectionLog logs one refused stream per peer address a minute at warn, then says how many it passed over", () => {
  let now = 0;
  const logger = new RecordingLogger();
  const log = new ConnectionLog(logger, () => now);
  for (let i = 0; i < 500; i++) log.refused(`10.0.0.1:${40000 + i}`, 3, `bad node ${i}`);
  log.refused("10.0.0.2:40000", 7, "denied");
  assert.deepEqual(logger.lines.map((l) => [l.level, l.msg, l.fields?.peer]), [
    ["warn", "refused ADS stream", "10.0.0.1:40000"],
    ["warn", "refused ADS stream", "10.0.0.2:40000"],
  ]);
  now = 60_000;
  log.refused("10.0.0.1:50000", 3, "bad node again");
  assert.deepEqual(logger.lines.at(-1), {
    level: "warn",
    msg: "refused ADS stream",
    fields: { peer: "10.0.0.1:50000", code: "InvalidArgument", details: "bad node again", notLogged: 499 },
  });
});

Deno.test("ConnectionLog logs streams turned away while not ready once a minute for every peer together, at info", () => {
  let now = 0;
  const logger = new RecordingLogger();
  const log = new ConnectionLog(logger, () => now);
  // A fleet reconnecting to a restarted server: each proxy has its own address.
  for (let i = 0; i < 1_000; i++) {
    log.notReady(`10.0.${i >> 8}.${i & 255}:15000`, "waiting for every source to sync");
  }
  assert.equal(logger.lines.length, 1);
  assert.equal(logger.lines[0].level, "info");
  now = 60_000;
  log.notReady("10.9.9.9:15000", "waiting for every source to sync");
  assert.equal(logger.lines.at(-1)?.fields?.notLogged, 999);
});
