import assert from "node:assert/strict";
import fc from "fast-check";
import { earliestOverlaps } from "./host_overlaps.ts";
import { hostsMatch } from "./hosts.ts";

/** The definition: the first earlier host that hostsMatch pairs with each host. */
function pairwise(hosts: readonly string[]): (number | undefined)[] {
  return hosts.map((host, j) => {
    const i = hosts.findIndex((other, i) => i < j && hostsMatch(other, host));
    return i < 0 ? undefined : i;
  });
}

Deno.test("earliestOverlaps finds for each host the first earlier host it overlaps, as comparing every pair does", () => {
  const host = fc.array(fc.constantFrom("*", "a", "b", ".", "-"), { maxLength: 6 }).map((c) => c.join(""));
  fc.assert(
    fc.property(fc.array(host, { maxLength: 12 }), (hosts) => {
      assert.deepEqual(earliestOverlaps(hosts), pairwise(hosts), JSON.stringify(hosts));
    }),
    { numRuns: 20_000 },
  );
});

Deno.test("earliestOverlaps names the first host each one overlaps: equal, covered by a wildcard, or covering", () => {
  assert.deepEqual(
    earliestOverlaps(["a.mesh.io", "*.mesh.io", "b.io", "*.io", "a.mesh.io", "*", "c.example.com"]),
    [undefined, 0, undefined, 0, 0, 0, 5],
  );
  assert.deepEqual(earliestOverlaps(["*-svc.mesh.io", "a-svc.mesh.io", "asvc.mesh.io"]), [
    undefined,
    0,
    undefined,
  ]);
});

Deno.test("earliestOverlaps answers 200,000 copies of one host and 200,000 distinct hosts, one answer each", () => {
  // Pair by pair these were 2·10¹⁰ comparisons, and as errors, 2·10¹⁰ of them.
  const copies = earliestOverlaps(Array(200_000).fill("a.example.com"));
  assert.deepEqual([copies.length, copies[0], copies[1], copies[199_999]], [200_000, undefined, 0, 0]);
  const distinct = Array.from({ length: 200_000 }, (_, i) => `h${i}.example.com`);
  assert.equal(earliestOverlaps(distinct).every((i) => i === undefined), true);
  assert.deepEqual(earliestOverlaps([...distinct, "*.example.com"]).at(-1), 0);
});
