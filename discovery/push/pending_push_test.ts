import assert from "node:assert/strict";
import fc from "fast-check";
import { PendingPush } from "./pending_push.ts";
import { mergePushRequests, type PushRequest, pushRequest, type TriggerReason } from "./push_request.ts";

const request: fc.Arbitrary<PushRequest> = fc.record({
  full: fc.boolean(),
  reason: fc.constantFrom<TriggerReason>("endpoint", "config", "service", "global"),
  configs: fc.option(fc.uniqueArray(fc.constantFrom("a", "b", "c", "d"), { maxLength: 3 }), {
    nil: undefined,
  }),
  start: fc.integer({ min: 0, max: 1000 }),
}).map(({ full, reason, configs, start }) => pushRequest(full, reason, configs, start));

Deno.test("PendingPush merges a burst of requests as folding mergePushRequests does", () => {
  fc.assert(fc.property(fc.array(request, { maxLength: 20 }), (requests) => {
    const pending = new PendingPush();
    let folded: PushRequest | undefined;
    for (const r of requests) {
      pending.add(r);
      folded = mergePushRequests(folded, r);
    }
    const built = pending.build();
    assert.deepStrictEqual(
      built && { ...built, configsUpdated: built.configsUpdated && [...built.configsUpdated].sort() },
      folded && { ...folded, configsUpdated: folded.configsUpdated && [...folded.configsUpdated].sort() },
    );
  }));
});
