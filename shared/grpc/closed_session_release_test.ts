import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { releaseClosedSessions } from "./closed_session_release.ts";
import { runGcProbe } from "./_gc_probe.ts";

Deno.test("A gRPC server lets go of the sessions of connections that have closed", async () => {
  const found = await runGcProbe("./_closed_sessions_probe.ts", ["20", String(64 * 1024)]);
  assert.deepEqual(found, { sessions: 20, closed: 20, alive: 0 });
});

/** The runtime's symbols: one for every session's native handle, one for every handle's owner. */
const K_HANDLE = Symbol("kHandle");
const OWNER = Symbol("ownerSymbol");

/** A server session as the runtime shapes it: its native handle, which names the session its owner. */
function fakeSession() {
  const session = new EventEmitter() as EventEmitter & Record<symbol, unknown>;
  const handle: Record<string | symbol, unknown> = {
    [OWNER]: session,
    sendPending: () => session,
    onstreamclose: () => session,
    fields: new Uint8Array(4),
  };
  session[K_HANDLE] = handle;
  return { session, handle };
}

Deno.test("releaseClosedSessions points a closed session's handle away from it, and leaves an open one", () => {
  const server = new EventEmitter();
  releaseClosedSessions(server);
  const open = fakeSession();
  const closed = fakeSession();
  server.emit("session", open.session);
  server.emit("session", closed.session);
  closed.session.emit("close");

  assert.equal(open.handle[OWNER], open.session);
  assert.equal((open.handle.sendPending as () => unknown)(), open.session);

  const owner = closed.handle[OWNER] as { destroyed: boolean; destroy(): void };
  assert.notEqual(owner, closed.session);
  assert.equal(owner.destroyed, true, "a late runtime callback reads the owner as destroyed and returns");
  owner.destroy();
  assert.equal((closed.handle.sendPending as () => unknown)(), undefined);
  assert.equal((closed.handle.onstreamclose as () => unknown)(), undefined);
  assert.ok(closed.handle.fields instanceof Uint8Array, "what is not a callback stays");
});

Deno.test("releaseClosedSessions leaves a session without the runtime's handle or owner as it is", () => {
  const server = new EventEmitter();
  releaseClosedSessions(server);
  const bare = new EventEmitter();
  server.emit("session", bare);
  assert.equal(bare.listenerCount("close"), 0);

  const { session, handle } = fakeSession();
  delete handle[OWNER];
  server.emit("session", session);
  assert.equal(session.listenerCount("close"), 0);
});
