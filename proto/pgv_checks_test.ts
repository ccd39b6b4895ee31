import assert from "node:assert/strict";
import {
  checkAnyRules,
  checkBoolRules,
  checkBytesRules,
  checkDurationRules,
  checkEnumRules,
  checkNumberRules,
  checkStringRules,
  checkTimestampRules,
  toNanos,
} from "./pgv_checks.ts";

Deno.test("checkNumberRules applies const, in, not_in and bounds", async (t) => {
  await t.step("single bounds", () => {
    assert.equal(checkNumberRules("uint32", { lte: 65535 }, 65535), undefined);
    assert.equal(checkNumberRules("uint32", { lte: 65535 }, 65536), "must be <= 65535 (got 65536)");
    assert.equal(checkNumberRules("uint32", { lt: 10 }, 10), "must be < 10 (got 10)");
    assert.equal(checkNumberRules("int32", { gt: 0 }, 0), "must be > 0 (got 0)");
    assert.equal(checkNumberRules("int32", { gte: -5 }, -6), "must be >= -5 (got -6)");
    assert.equal(checkNumberRules("double", { gt: 0.5 }, 0.5), "must be > 0.5 (got 0.5)");
  });
  await t.step("a range, inclusive or exclusive at each end", () => {
    assert.equal(checkNumberRules("uint32", { gte: 1, lte: 65535 }, 1), undefined);
    assert.equal(
      checkNumberRules("uint32", { gte: 1, lte: 65535 }, 0),
      "must be in range [1, 65535] (got 0)",
    );
    assert.equal(checkNumberRules("uint32", { gt: 0, lt: 256 }, 256), "must be in range (0, 256) (got 256)");
    assert.equal(checkNumberRules("double", { gte: 1, lte: 3 }, 3.5), "must be in range [1, 3] (got 3.5)");
  });
  await t.step("a reversed range excludes the values between the bounds", () => {
    assert.equal(checkNumberRules("int32", { lt: 0, gt: 10 }, -1), undefined);
    assert.equal(checkNumberRules("int32", { lt: 0, gt: 10 }, 11), undefined);
    assert.equal(checkNumberRules("int32", { lt: 0, gt: 10 }, 5), "must be < 0 or > 10 (got 5)");
    assert.equal(checkNumberRules("int32", { lte: 0, gte: 10 }, 0), undefined);
  });
  await t.step("const and lists", () => {
    assert.equal(checkNumberRules("uint32", { const: 7 }, 8), "must equal 7 (got 8)");
    assert.equal(checkNumberRules("uint32", { in: [1, 2] }, 3), "must be one of [1, 2] (got 3)");
    assert.equal(checkNumberRules("uint32", { in: 1 }, 1), undefined);
    assert.equal(checkNumberRules("uint32", { not_in: [6] }, 6), "must not be one of [6] (got 6)");
  });
  await t.step("64-bit integers compare exactly, from Long-like strings too", () => {
    assert.equal(checkNumberRules("uint64", { lte: 8388608 }, "8388609"), "must be <= 8388608 (got 8388609)");
    assert.equal(
      checkNumberRules("int64", { lt: "9223372036854775807" }, "9223372036854775807"),
      "must be < 9223372036854775807 (got 9223372036854775807)",
    );
    assert.equal(checkNumberRules("uint64", { gt: 0 }, { toString: () => "1" }), undefined);
  });
});

Deno.test("checkEnumRules checks defined_only and the value lists", () => {
  assert.equal(checkEnumRules({ defined_only: true }, 2, [0, 1, 2], "E"), undefined);
  assert.equal(
    checkEnumRules({ defined_only: true }, 3, [0, 1, 2], "E"),
    "must be a defined value of enum E (got 3)",
  );
  assert.equal(checkEnumRules({ not_in: 6 }, 6, [6], "E"), "must not be one of [6] (got 6)");
  assert.equal(checkEnumRules({ in: [1] }, 0, [0, 1], "E"), "must be one of [1] (got 0)");
  assert.equal(checkEnumRules({ const: 1 }, 1, [0, 1], "E"), undefined);
});

Deno.test("checkBoolRules checks const", () => {
  assert.equal(checkBoolRules({ const: true }, true), undefined);
  assert.equal(checkBoolRules({ const: true }, false), "must be true");
});

Deno.test("checkStringRules measures length in characters and in UTF-8 bytes", () => {
  assert.equal(checkStringRules({ min_len: 1 }, ""), 'must be at least 1 character (got "")');
  assert.equal(checkStringRules({ max_len: 2 }, "😀😀"), undefined, "two code points, four UTF-16 units");
  assert.equal(checkStringRules({ max_bytes: 4 }, "😀😀"), 'must be at most 4 bytes (got "😀😀")');
  assert.equal(checkStringRules({ min_bytes: 2 }, "é"), undefined);
  assert.equal(checkStringRules({ len: 3 }, "ab"), 'must be exactly 3 characters (got "ab")');
  assert.equal(checkStringRules({ len_bytes: 1 }, "é"), 'must be exactly 1 byte (got "é")');
});

Deno.test("checkStringRules checks content rules", () => {
  assert.equal(checkStringRules({ const: "a" }, "b"), 'must equal "a" (got "b")');
  assert.equal(checkStringRules({ prefix: "/" }, "x"), 'must start with "/" (got "x")');
  assert.equal(checkStringRules({ suffix: ".mmdb" }, "x.db"), 'must end with ".mmdb" (got "x.db")');
  assert.equal(checkStringRules({ contains: "." }, "x"), 'must contain "." (got "x")');
  assert.equal(checkStringRules({ not_contains: "/" }, "a/b"), 'must not contain "/" (got "a/b")');
  assert.equal(
    checkStringRules({ in: ["http", "https"] }, "ftp"),
    'must be one of ["http", "https"] (got "ftp")',
  );
  assert.equal(checkStringRules({ in: "https" }, "https"), undefined);
  assert.equal(checkStringRules({ not_in: ["a"] }, "a"), 'must not be one of ["a"] (got "a")');
  assert.equal(
    checkStringRules({ pattern: "^[^?#]+[^?#/]$" }, "/a/"),
    'must match pattern "^[^?#]+[^?#/]$" (got "/a/")',
  );
  assert.equal(checkStringRules({ pattern: "^[^?#]+[^?#/]$" }, "/a"), undefined);
  assert.equal(checkStringRules({ pattern: "(" }, "x"), 'has a rule pattern "(" that cannot be compiled');
});

Deno.test("checkStringRules checks well-known formats", async (t) => {
  await t.step("addresses", () => {
    assert.equal(checkStringRules({ hostname: true }, "reviews.default.svc"), undefined);
    assert.equal(
      checkStringRules({ hostname: true }, "-bad.example"),
      'must be a hostname (got "-bad.example")',
    );
    assert.equal(checkStringRules({ ip: true }, "::1"), undefined);
    assert.equal(checkStringRules({ ipv4: true }, "::1"), 'must be an IPv4 address (got "::1")');
    assert.equal(checkStringRules({ ipv6: true }, "10.0.0.1"), 'must be an IPv6 address (got "10.0.0.1")');
    assert.equal(checkStringRules({ address: true }, "10.0.0.1"), undefined);
    assert.equal(checkStringRules({ address: true }, "a_b"), 'must be a hostname or IP address (got "a_b")');
  });
  await t.step("other formats", () => {
    assert.equal(checkStringRules({ email: true }, "ops@example.com"), undefined);
    assert.equal(checkStringRules({ email: true }, "ops"), 'must be an e-mail address (got "ops")');
    assert.equal(checkStringRules({ uri: true }, "https://a/b"), undefined);
    assert.equal(checkStringRules({ uri: true }, "/b"), 'must be an absolute URI (got "/b")');
    assert.equal(checkStringRules({ uri_ref: true }, "/b?c"), undefined);
    assert.equal(checkStringRules({ uuid: true }, "123e4567-e89b-12d3-a456-426614174000"), undefined);
    assert.equal(checkStringRules({ uuid: true }, "123"), 'must be a UUID (got "123")');
  });
  await t.step("header regexes, strict by default", () => {
    assert.equal(checkStringRules({ well_known_regex: "HTTP_HEADER_NAME" }, ":authority"), undefined);
    assert.equal(
      checkStringRules({ well_known_regex: "HTTP_HEADER_NAME" }, "a b"),
      'must be a valid HTTP header name (got "a b")',
    );
    assert.equal(checkStringRules({ well_known_regex: "HTTP_HEADER_NAME", strict: false }, "a b"), undefined);
    assert.equal(
      checkStringRules({ well_known_regex: 1, strict: false }, "a\u0000"),
      'must be a valid HTTP header name (no NUL, CR or LF) (got "a\\u0000")',
    );
    assert.equal(checkStringRules({ well_known_regex: "HTTP_HEADER_VALUE" }, "a\tb"), undefined);
    assert.equal(
      checkStringRules({ well_known_regex: "HTTP_HEADER_VALUE" }, "a\u0001"),
      'must be a valid HTTP header value (got "a\\u0001")',
    );
  });
  await t.step("ignore_empty skips every rule for the empty string", () => {
    assert.equal(
      checkStringRules({ well_known_regex: "HTTP_HEADER_NAME", ignore_empty: true }, ""),
      undefined,
    );
    assert.equal(
      checkStringRules({ well_known_regex: "HTTP_HEADER_NAME" }, ""),
      'must be a valid HTTP header name (got "")',
    );
  });
});

Deno.test("checkBytesRules checks lengths, content and IP sizes", () => {
  const bytes = Uint8Array.of(1, 2, 3, 4);
  assert.equal(checkBytesRules({ min_len: 0, max_len: 16384 }, bytes), undefined);
  assert.equal(checkBytesRules({ max_len: 3 }, bytes), "must be at most 3 bytes (got 4 bytes)");
  assert.equal(checkBytesRules({ min_len: 5 }, bytes), "must be at least 5 bytes (got 4 bytes)");
  assert.equal(checkBytesRules({ len: 1 }, bytes), "must be exactly 1 byte (got 4 bytes)");
  assert.equal(checkBytesRules({ ipv4: true }, bytes), undefined);
  assert.equal(checkBytesRules({ ipv6: true }, bytes), "must be an IPv6 address in 16 bytes (got 4 bytes)");
  const text = new TextEncoder().encode("abc");
  assert.equal(checkBytesRules({ prefix: "ab", suffix: "bc", contains: "b" }, text), undefined);
  assert.equal(checkBytesRules({ prefix: "abcd" }, text), 'must start with "abcd"');
  assert.equal(checkBytesRules({ suffix: "x" }, text), 'must end with "x"');
  assert.equal(checkBytesRules({ contains: "z" }, text), 'must contain "z"');
  assert.equal(checkBytesRules({ const: "abc" }, text), undefined);
  assert.equal(checkBytesRules({ in: ["x"] }, text), "must be one of the given byte strings");
  assert.equal(checkBytesRules({ pattern: "^a.c$" }, text), undefined);
});

Deno.test("checkDurationRules compares durations, an empty bound meaning zero", () => {
  assert.equal(toNanos({}), 0n);
  assert.equal(toNanos({ seconds: "2", nanos: 5 }), 2_000_000_005n);
  assert.equal(checkDurationRules({ gt: {} }, { seconds: 0, nanos: 1 }), undefined);
  assert.equal(checkDurationRules({ gt: {} }, {}), "must be > 0s (got 0s)");
  assert.equal(
    checkDurationRules({ gte: { nanos: 1000000 } }, { nanos: 999999 }),
    "must be >= 0.001s (got 0.000999999s)",
  );
  assert.equal(
    checkDurationRules({ lt: { seconds: 4294967296 }, gte: {} }, { seconds: 4294967296 }),
    "must be in range [0s, 4294967296s) (got 4294967296s)",
  );
  assert.equal(checkDurationRules({ const: { seconds: 1 } }, { seconds: -1 }), "must equal 1s (got -1s)");
});

Deno.test("checkTimestampRules compares with the given now", () => {
  const now = new Date("2024-01-01T00:00:00Z");
  const seconds = now.getTime() / 1000;
  assert.equal(checkTimestampRules({ lt_now: true }, { seconds: seconds - 1 }, now), undefined);
  assert.equal(
    checkTimestampRules({ lt_now: true }, { seconds: seconds + 1 }, now),
    "must be before now (got 2024-01-01T00:00:01.000Z)",
  );
  assert.equal(
    checkTimestampRules({ gt_now: true }, { seconds }, now),
    "must be after now (got 2024-01-01T00:00:00.000Z)",
  );
  assert.equal(checkTimestampRules({ within: { seconds: 60 } }, { seconds: seconds - 60 }, now), undefined);
  assert.equal(
    checkTimestampRules({ within: { seconds: 60 } }, { seconds: seconds + 61 }, now),
    "must be within 60s of now (got 2024-01-01T00:01:01.000Z)",
  );
  assert.equal(
    checkTimestampRules({ gt: { seconds } }, { seconds }, now),
    "must be > 2024-01-01T00:00:00.000Z (got 2024-01-01T00:00:00.000Z)",
  );
});

Deno.test("checkAnyRules checks the type URL lists", () => {
  assert.equal(checkAnyRules({ in: ["a/x.Y"] }, "a/x.Y"), undefined);
  assert.equal(checkAnyRules({ in: ["a/x.Y"] }, "a/x.Z"), 'must have a type URL in ["a/x.Y"] (got "a/x.Z")');
  assert.equal(checkAnyRules({ not_in: "a/x.Y" }, "a/x.Y"), 'must not have type URL "a/x.Y"');
});
