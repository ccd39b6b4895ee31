import assert from "node:assert/strict";
import { parseProxyTracing, ProxyTracingError } from "./proxy_tracing.ts";

function refuses(proxyConfig: unknown, pattern: RegExp): void {
  assert.throws(() => parseProxyTracing(proxyConfig), (e: unknown) => {
    assert.ok(e instanceof ProxyTracingError, `expected ProxyTracingError, got ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("parseProxyTracing keeps the tracing fields listeners read", async (t) => {
  await t.step("no PROXY_CONFIG or no tracing is no tracing", () => {
    assert.equal(parseProxyTracing(undefined), undefined);
    assert.equal(parseProxyTracing(null), undefined);
    assert.equal(parseProxyTracing({ concurrency: 2 }), undefined);
  });
  await t.step(
    "sampling, path length and each kind of custom tag are kept; other fields are not read",
    () => {
      assert.deepEqual(
        parseProxyTracing({
          tracing: {
            zipkin: { address: "zipkin:9411" },
            sampling: 101,
            maxPathTagLength: 4294967295,
            customTags: {
              a: { literal: { value: "x" } },
              b: { environment: { name: "E" } },
              c: { header: { name: "h", defaultValue: "d" } },
            },
          },
        }),
        {
          sampling: 101,
          maxPathTagLength: 4294967295,
          customTags: {
            a: { literal: { value: "x" } },
            b: { environment: { name: "E", defaultValue: "" } },
            c: { header: { name: "h", defaultValue: "d" } },
          },
        },
      );
    },
  );
});

Deno.test("parseProxyTracing refuses a value listeners cannot encode, naming its field", async (t) => {
  // Before: a fractional path length reached the listener's uint32 field and every LDS build of the proxy threw.
  await t.step("a fractional, negative or too large path length", () => {
    refuses(
      { tracing: { maxPathTagLength: 5e-324 } },
      /^PROXY_CONFIG\.tracing\.maxPathTagLength is number 5e-324: expected an integer in 0\.\.4294967295$/,
    );
    refuses({ tracing: { maxPathTagLength: -1 } }, /maxPathTagLength is number -1/);
    refuses({ tracing: { maxPathTagLength: 2 ** 32 } }, /maxPathTagLength is number 4294967296/);
    refuses({ tracing: { maxPathTagLength: "10" } }, /maxPathTagLength is string "10"/);
  });
  await t.step("a sampling that is not a finite number", () => {
    refuses(
      { tracing: { sampling: NaN } },
      /^PROXY_CONFIG\.tracing\.sampling is number NaN: expected a finite number/,
    );
    refuses({ tracing: { sampling: ["1"] } }, /sampling is a list/);
  });
  await t.step("a PROXY_CONFIG, tracing or custom tags that is not a map", () => {
    refuses("tracing", /^PROXY_CONFIG is string "tracing": expected a map$/);
    refuses({ tracing: [1] }, /^PROXY_CONFIG\.tracing is a list: expected a map$/);
    refuses({ tracing: { customTags: "a" } }, /^PROXY_CONFIG\.tracing\.customTags is string "a"/);
  });
  await t.step("a custom tag with no kind, two kinds, or a field that is not a string", () => {
    refuses(
      { tracing: { customTags: { t: "x" } } },
      /^PROXY_CONFIG\.tracing\.customTags\.t is string "x": expected a map$/,
    );
    refuses(
      { tracing: { customTags: { t: {} } } },
      /customTags\.t sets none of literal, environment, header/,
    );
    refuses(
      { tracing: { customTags: { t: { literal: { value: "a" }, header: { name: "h" } } } } },
      /customTags\.t sets literal and header of literal, environment, header: expected exactly one/,
    );
    refuses(
      { tracing: { customTags: { t: { environment: { name: {} } } } } },
      /customTags\.t\.environment\.name is a map: expected a string/,
    );
  });
  await t.step("a long value is shortened in the message", () => {
    assert.throws(
      () => parseProxyTracing({ tracing: { sampling: "x".repeat(10_000) } }),
      (e: Error) => e.message.length < 200,
    );
  });
});
