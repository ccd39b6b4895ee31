import assert from "node:assert/strict";
import { jsonResponse } from "./router.ts";
import { jsonArrayResponse, jsonObjectResponse } from "./json_stream.ts";

const values: unknown[] = [
  1,
  "two",
  null,
  { nested: { deep: [1, { a: "b" }], empty: [], none: {} }, big: 12345678901234567890n },
  [],
  {},
  undefined,
  () => 0,
  "line\nbreak",
];

Deno.test("jsonArrayResponse writes what jsonResponse writes for the same array", async () => {
  for (const items of [[], [1], values]) {
    const streamed = await jsonArrayResponse(items, (v) => v).text();
    assert.equal(streamed, await jsonResponse(items).text());
  }
});

Deno.test("jsonObjectResponse writes what jsonResponse writes for the same object, undefined values left out", async () => {
  const cases: (readonly [string, unknown])[][] = [
    [],
    [["only", undefined]],
    values.map((v, i) => [`key "${i}"`, v] as const),
  ];
  for (const entries of cases) {
    const streamed = await jsonObjectResponse(entries, (v) => v).text();
    assert.equal(streamed, await jsonResponse(Object.fromEntries(entries)).text());
  }
});

/** A response of 10,000 items of about 120 bytes, and how many it has viewed so far. */
function countedArrayResponse(): { items: number[]; response: Response; viewed: () => number } {
  const items = Array.from({ length: 10_000 }, (_, i) => i);
  let viewed = 0;
  const response = jsonArrayResponse(items, (i) => {
    viewed++;
    return { index: i, padding: "x".repeat(100) };
  });
  return { items, response, viewed: () => viewed };
}

Deno.test("jsonArrayResponse views items only as its client reads, in pieces", async () => {
  const { items, response, viewed } = countedArrayResponse();
  assert.equal(viewed(), 0, "nothing is built before the client reads");
  const reader = response.body!.getReader();
  await reader.read();
  assert.ok(
    viewed() > 0 && viewed() < items.length,
    `the first piece viewed ${viewed()} of ${items.length}`,
  );
  let pieces = 1;
  while (!(await reader.read()).done) pieces++;
  assert.equal(viewed(), items.length);
  assert.ok(pieces > 10, `${pieces} pieces`);
});

Deno.test("jsonArrayResponse builds each piece after the first in a turn of the event loop of its own", async () => {
  const { response, viewed } = countedArrayResponse();
  const reader = response.body!.getReader();
  await reader.read();
  const afterFirst = viewed();
  let viewedWhenTimerRan = -1;
  setTimeout(() => viewedWhenTimerRan = viewed(), 0);
  await reader.read();
  assert.equal(viewedWhenTimerRan, afterFirst, "a timer due before the second piece ran before it was built");
  await reader.cancel();
});
