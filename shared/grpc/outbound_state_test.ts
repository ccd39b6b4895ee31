import assert from "node:assert/strict";
import { isOutboundStalled, outboundState, whenOutboundFlushed } from "./outbound_state.ts";

/** The shape grpc-js gives a server call: the handler's call wraps a call holding the HTTP/2 stream. */
function fakeCall(queued: number, window: number, socketWritten?: number) {
  let stateReads = 0;
  const session = {
    destroyed: false,
    remoteWindowSize: window,
    get state(): { remoteWindowSize: number } {
      stateReads++;
      return { remoteWindowSize: this.remoteWindowSize };
    },
    ...(socketWritten === undefined ? {} : { socket: { bytesWritten: socketWritten, writableLength: 0 } }),
  };
  const stream = { writableLength: queued, destroyed: false, session };
  return { call: { stream }, stream, stateReads: () => stateReads };
}

Deno.test("outboundState reads the queued bytes and the peer's window", () => {
  assert.deepEqual(outboundState(fakeCall(10, 500)), { queuedBytes: 10, peerWindowBytes: 500 });
  assert.equal(outboundState({}), undefined, "an unknown call shape has no state");
});

Deno.test("isOutboundStalled is true while bytes are queued or the peer's window is closed", () => {
  assert.equal(isOutboundStalled(fakeCall(0, 65_535)), false);
  assert.equal(isOutboundStalled(fakeCall(1, 65_535)), true);
  assert.equal(isOutboundStalled(fakeCall(0, 0)), true);
  assert.equal(isOutboundStalled({}), false, "without a transport to read, nothing is held back");
});

Deno.test("isOutboundStalled judges by the socket's count when it has one, without reading the session", () => {
  const written = fakeCall(0, 65_535, 5_000);
  assert.equal(isOutboundStalled(written, 5_000), false, "the socket has written the response");
  assert.equal(isOutboundStalled(written, 5_001), true, "a byte of it is still to go");
  assert.equal(written.stateReads(), 0, "the session's state was not copied");
  assert.equal(isOutboundStalled(fakeCall(1, 65_535, 9_000), 5_000), true, "queued bytes still wait");
  const closed = fakeCall(0, 0);
  assert.equal(isOutboundStalled(closed, 5_000), true, "without a socket count, a closed window says it");
  assert.equal(closed.stateReads(), 1);
});

Deno.test("whenOutboundFlushed waits for the peer's credit and stops when aborted", async (t) => {
  await t.step("it resolves once the peer opens its window", async () => {
    const call = fakeCall(0, 0);
    const flushed = whenOutboundFlushed(call);
    call.stream.session.remoteWindowSize = 1_000;
    await flushed;
  });
  await t.step("it rejects with the abort reason while the window stays closed", async () => {
    const controller = new AbortController();
    const flushed = whenOutboundFlushed(fakeCall(0, 0), controller.signal);
    controller.abort(new Error("timed out"));
    await assert.rejects(flushed, /timed out/);
  });
  await t.step("a closed connection holds nothing back", async () => {
    const call = fakeCall(5, 0);
    call.stream.destroyed = true;
    await whenOutboundFlushed(call);
  });
});
