import assert from "node:assert/strict";
import { ResponseBound, streamInPieces } from "./response_bound.ts";

Deno.test("ResponseBound counts a response until its body is read, cancelled or fails, and refuses past its max", async () => {
  const bound = new ResponseBound(2);
  const read = await bound.run(() => new Response("a body"));
  const cancelled = await bound.run(() => new Response("another"));
  assert.equal(bound.inProgress, 2);
  let ran = false;
  assert.equal(await bound.run(() => (ran = true, new Response("x"))), undefined);
  assert.equal(ran, false, "a refused response is not built");

  assert.equal(await read!.text(), "a body");
  assert.equal(bound.inProgress, 1);
  await cancelled!.body!.cancel();
  assert.equal(bound.inProgress, 0);

  const failing = await bound.run(() =>
    new Response(new ReadableStream({ pull: (controller) => controller.error(new Error("source gone")) }))
  );
  await assert.rejects(failing!.text());
  assert.equal(bound.inProgress, 0);
  assert.equal((await bound.run(() => new Response(null, { status: 204 })))!.status, 204);
  assert.equal(bound.inProgress, 0, "a response without a body ends at once");
  await assert.rejects(bound.run(() => Promise.reject(new RangeError("handler failed"))), RangeError);
  assert.equal(bound.inProgress, 0);
  const kept = await bound.run(() => new Response("x", { status: 201, headers: { "x-kind": "kept" } }));
  assert.equal(kept!.status, 201);
  assert.equal(kept!.headers.get("x-kind"), "kept");
  await kept!.body!.cancel();
});

Deno.test("streamInPieces hands a large chunk on in 64 KiB pieces, reading its source only as they are taken", async () => {
  let pulls = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      if (pulls <= 2) controller.enqueue(new Uint8Array(150 * 1024).fill(pulls));
      else controller.close();
    },
  }, { highWaterMark: 0 });
  const reader = streamInPieces(source).getReader();
  const sizes: number[] = [];
  const first = await reader.read();
  sizes.push(first.value!.byteLength);
  assert.equal(pulls, 1, "the source is read once for the first piece");
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    sizes.push(value.byteLength);
  }
  assert.deepEqual(sizes, [65536, 65536, 22528, 65536, 65536, 22528]);
});
