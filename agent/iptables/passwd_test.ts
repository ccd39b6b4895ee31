import assert from "node:assert/strict";
import { TESTDATA } from "./_test_support.ts";
import { findPasswdUser, lookupPasswdUser } from "./passwd.ts";

const PASSWD = [
  "root:x:0:0:root:/root:/bin/bash",
  "mesh-proxy:x:1337:1338::/home/mesh-proxy:/bin/sh",
  "broken:x:abc:1:::",
  "",
].join("\n");

Deno.test("findPasswdUser reads the uid and gid of a named user", () => {
  assert.deepEqual(findPasswdUser(PASSWD, "mesh-proxy"), { uid: 1337, gid: 1338 });
  assert.deepEqual(findPasswdUser(PASSWD, "root"), { uid: 0, gid: 0 });
});

Deno.test("findPasswdUser returns undefined for absent users and malformed lines", () => {
  assert.equal(findPasswdUser(PASSWD, "nobody-here"), undefined);
  assert.equal(findPasswdUser(PASSWD, "broken"), undefined);
  assert.equal(findPasswdUser(PASSWD, "mesh"), undefined);
});

Deno.test("lookupPasswdUser reads a passwd file, and treats a missing file as an unknown user", () => {
  const path = new URL("passwd", TESTDATA).pathname;
  assert.deepEqual(lookupPasswdUser("mesh-proxy", path), { uid: 1337, gid: 1338 });
  assert.equal(lookupPasswdUser("mesh-proxy", new URL("no-such-passwd", TESTDATA).pathname), undefined);
});
