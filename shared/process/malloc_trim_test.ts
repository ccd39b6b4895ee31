import assert from "node:assert/strict";
import { libcCandidates } from "./glibc_library.ts";
import { openMallocTrim } from "./malloc_trim.ts";

Deno.test("openMallocTrim binds glibc's malloc_trim where FFI is granted for the system libraries", {
  ignore: Deno.build.os !== "linux",
}, async () => {
  const binding = openMallocTrim();
  assert.ok("trim" in binding, JSON.stringify(binding));
  assert.ok(libcCandidates().includes(binding.library));
  assert.equal(typeof await binding.trim(), "boolean");
});

Deno.test("openMallocTrim says why it cannot trim instead of throwing", () => {
  assert.match(
    (openMallocTrim({ os: "darwin" }) as { unavailable: string }).unavailable,
    /malloc_trim is glibc's; this is darwin/,
  );
  assert.match(
    (openMallocTrim({ os: "linux", granted: () => false }) as { unavailable: string }).unavailable,
    /FFI is not granted for glibc at "\/lib\/.*--allow-ffi=\/lib,\/usr\/lib,\/lib64,\/usr\/lib64/,
  );
  assert.match(
    (openMallocTrim({ os: "linux", candidates: ["/lib/none/libc.so.6"], granted: () => true }) as {
      unavailable: string;
    }).unavailable,
    /No glibc with malloc_trim: "\/lib\/none\/libc.so.6"/,
  );
});
