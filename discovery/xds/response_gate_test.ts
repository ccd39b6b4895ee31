import assert from "node:assert/strict";
import { pollingYield } from "@mesh/shared/time/loop_yield";
import { ResponseGate } from "./response_gate.ts";

/** A gate whose turns of the event loop the test hands out one at a time. */
function manualGate(permits: number, msPerResponse = 20) {
  const turns: (() => void)[] = [];
  let clock = 0;
  // Every reading of the clock is one more response built: each takes `msPerResponse`.
  const now = () => (clock += msPerResponse);
  const gate = new ResponseGate(permits, { yieldTo: (next) => turns.push(next), now, sliceMs: 15 });
  const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
  const nextTurn = async () => {
    const turn = turns.shift();
    assert.ok(turn, "a holder is waiting for its turn");
    turn();
    await flush();
  };
  return { gate, turns, nextTurn, flush };
}

Deno.test("ResponseGate runs at most `permits` responses at once, in arrival order", async () => {
  const { gate, nextTurn, flush } = manualGate(2);
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const work = (name: string) =>
    gate.run(() => {
      started.push(name);
      return new Promise<void>((resolve) => finish.set(name, resolve));
    });
  const runs = ["a", "b", "c", "d"].map(work);
  await flush();
  await nextTurn();
  await nextTurn();
  assert.deepEqual(started, ["a", "b"]);
  assert.deepEqual(gate.stats(), { running: 2, waiting: 2 });
  finish.get("b")!();
  await flush();
  await nextTurn();
  assert.deepEqual(started, ["a", "b", "c"]);
  finish.get("a")!();
  await flush();
  await nextTurn();
  finish.get("c")!();
  finish.get("d")!();
  await Promise.all(runs);
  assert.deepEqual(started, ["a", "b", "c", "d"]);
  assert.deepEqual(gate.stats(), { running: 0, waiting: 0 });
});

Deno.test("ResponseGate gives a turn of the event loop to each response that fills a slice", async () => {
  const { gate, turns, nextTurn, flush } = manualGate(10);
  const started: string[] = [];
  for (const name of ["a", "b", "c"]) {
    void gate.run(() => {
      started.push(name);
      return Promise.resolve();
    });
  }
  await flush();
  assert.deepEqual(started, [], "nothing is built before the loop has turned");
  assert.equal(turns.length, 1, "one turn is asked for at a time");
  await nextTurn();
  assert.deepEqual(started, ["a"]);
  await nextTurn();
  await nextTurn();
  assert.deepEqual(started, ["a", "b", "c"]);
});

Deno.test("ResponseGate lets small responses share a turn, up to the slice", async () => {
  const { gate, turns, nextTurn, flush } = manualGate(10, 4);
  const started: string[] = [];
  for (const name of ["a", "b", "c", "d", "e"]) {
    void gate.run(() => {
      started.push(name);
      return Promise.resolve();
    });
  }
  await flush();
  await nextTurn();
  // The turn's start reads the clock once, then each response once: 4, 8, 12 ms used, 16 ends the slice.
  assert.deepEqual(started, ["a", "b", "c", "d"]);
  assert.equal(turns.length, 1);
  await nextTurn();
  assert.deepEqual(started, ["a", "b", "c", "d", "e"]);
});

Deno.test("ResponseGate returns the permit when the work fails", async () => {
  const gate = new ResponseGate(1, { yieldTo: pollingYield() });
  await assert.rejects(gate.run(() => Promise.reject(new Error("send failed"))), /send failed/);
  assert.equal(await gate.run(() => Promise.resolve(7)), 7);
  assert.deepEqual(gate.stats(), { running: 0, waiting: 0 });
});

Deno.test("ResponseGate lets pending I/O run between two responses", async () => {
  const gate = new ResponseGate(10);
  const order: string[] = [];
  const io = Promise.withResolvers<void>();
  const responses = [1, 2].map((n) =>
    gate.run(() => {
      order.push(`response ${n}`);
      if (n === 1) {
        // A timer that falls due while the first response is built stands for I/O that became ready.
        setTimeout(() => {
          order.push("I/O");
          io.resolve();
        }, 0);
        const until = performance.now() + 6; // longer than the 4 ms slice
        while (performance.now() < until) { /* building */ }
      }
      return Promise.resolve();
    })
  );
  await Promise.all([...responses, io.promise]);
  assert.deepEqual(order, ["response 1", "I/O", "response 2"]);
});

Deno.test("ResponseGate refuses fewer than one permit", () => {
  assert.throws(() => new ResponseGate(0), /expected at least 1 permit/);
});

Deno.test("ResponseGate starts the holders of one turn in one batch, with no job between them", async () => {
  const { gate, nextTurn, flush } = manualGate(10, 4);
  const order: string[] = [];
  for (const name of ["a", "b", "c"]) {
    void gate.run(() => {
      order.push(`start ${name}`);
      // A job the holder queues (a resolved send, say) runs only once the whole batch has started.
      queueMicrotask(() => order.push(`job of ${name}`));
      return Promise.resolve();
    });
  }
  await flush();
  await nextTurn();
  assert.deepEqual(order, ["start a", "start b", "start c", "job of a", "job of b", "job of c"]);
});

Deno.test("ResponseGate asks for a permit only once admitted, and ends the admission when it returns it", async () => {
  const { gate, nextTurn, flush } = manualGate(1);
  const events: string[] = [];
  let admitFirst: ((leave?: () => void) => void) | undefined;
  const finish: (() => void)[] = [];
  const work = (name: string) => () => {
    events.push(`start ${name}`);
    return new Promise<void>((resolve) => finish.push(resolve));
  };
  const first = gate.run(work("first"), (enter) => {
    admitFirst = enter;
  });
  const second = gate.run(work("second"));
  await flush();
  await nextTurn();
  assert.deepEqual(events, ["start second"], "a run not yet admitted holds no permit and waits for none");
  assert.deepEqual(gate.stats(), { running: 1, waiting: 0 });
  admitFirst!(() => events.push("first left"));
  assert.deepEqual(gate.stats(), { running: 1, waiting: 1 });
  finish.shift()!();
  await second;
  await nextTurn();
  assert.deepEqual(events, ["start second", "start first"]);
  finish.shift()!();
  await first;
  assert.deepEqual(events, ["start second", "start first", "first left"]);
  assert.deepEqual(gate.stats(), { running: 0, waiting: 0 });
});

Deno.test("ResponseGate returns the permit and leaves when the work throws before its first await", async () => {
  const gate = new ResponseGate(1, { yieldTo: pollingYield() });
  let left = 0;
  await assert.rejects(
    gate.run(() => {
      throw new Error("build failed");
    }, (enter) => enter(() => left++)),
    /build failed/,
  );
  assert.equal(left, 1);
  assert.equal(await gate.run(() => Promise.resolve(7)), 7);
  assert.deepEqual(gate.stats(), { running: 0, waiting: 0 });
});

Deno.test("ResponseGate lets a connection in within a few responses while responses keep it busy", async () => {
  // Each response "takes" 5 ms on the gate's clock; the gate is never idle until the connection is accepted.
  let clock = 0;
  const gate = new ResponseGate(1, { now: () => clock, sliceMs: 4 });
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let built = 0;
  let builtWhenAccepted: number | undefined;
  const accepted = listener.accept().then((conn) => {
    builtWhenAccepted = built;
    conn.close();
  });
  const next = (): void =>
    gate.hold((release) => {
      built++;
      clock += 5;
      release();
      if (builtWhenAccepted === undefined && built < 2_000) next();
    });
  next();
  const client = await Deno.connect({ hostname: "127.0.0.1", port: (listener.addr as Deno.NetAddr).port });
  await accepted;
  client.close();
  listener.close();
  // Immediates alone let the runtime poll its sockets only every few dozen turns; the gate waits on I/O at
  // least every DEFAULT_POLL_EVERY_MS of building.
  assert.ok(builtWhenAccepted! <= 10, `accepted after ${builtWhenAccepted} responses`);
});

Deno.test("ResponseGate runs a holder's steps in the slices of its turns, behind the holders already waiting", async () => {
  // Each reading of the clock is 4 ms of work: a 15 ms slice ends after a few steps.
  const { gate, turns, nextTurn, flush } = manualGate(10, 4);
  const order: string[] = [];
  function* steps() {
    for (let i = 1; i <= 6; i++) {
      order.push(`step ${i}`);
      yield;
    }
    return "built";
  }
  let result: string | undefined;
  void gate.run(async () => {
    result = await gate.inSlices(steps());
  });
  void gate.run(() => {
    order.push("other holder");
    return Promise.resolve();
  });
  await flush();
  await nextTurn();
  assert.deepEqual(order, ["step 1", "step 2", "step 3", "step 4"], "the slice ends after a few steps");
  assert.equal(result, undefined);
  assert.equal(turns.length, 1, "the rest waits for the next turn");
  await nextTurn();
  assert.deepEqual(order.slice(4), ["other holder", "step 5", "step 6"], "behind the holder let in before");
  assert.equal(result, "built");
});
