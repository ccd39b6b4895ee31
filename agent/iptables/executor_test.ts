import assert from "node:assert/strict";
import { CommandNotFoundError, denoCommandExecutor } from "./executor.ts";
import { IPTABLES, needs } from "@mesh/shared/testing/system_tools";

Deno.test("The real executor returns the exit code and output of a command", needs(IPTABLES), async () => {
  const result = await denoCommandExecutor()("iptables-restore", ["--version"]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /^iptables-restore v\d+\.\d+\.\d+ \((nf_tables|legacy)\)/);
});

Deno.test("The real executor survives a command that ignores its stdin", needs(IPTABLES), async () => {
  const result = await denoCommandExecutor()(
    "iptables-restore",
    ["--version"],
    "*nat\nCOMMIT\n".repeat(20_000),
  );
  assert.equal(result.code, 0);
});

Deno.test("A missing command rejects with CommandNotFoundError naming what to install", async (t) => {
  await t.step("an unknown command", async () => {
    await assert.rejects(denoCommandExecutor()("mesh-no-such-command", []), (error: Error) => {
      assert.ok(error instanceof CommandNotFoundError);
      assert.equal(
        error.message,
        'Command "mesh-no-such-command" was not found on PATH: install it or add its directory to PATH',
      );
      return true;
    });
  });
  await t.step("the iptables and ip tools name their Debian packages", () => {
    assert.match(
      new CommandNotFoundError("iptables-restore").message,
      /install the Debian package "iptables" \(apt-get install iptables\)/,
    );
    assert.match(new CommandNotFoundError("ip6tables-save").message, /"iptables"/);
    assert.equal(new CommandNotFoundError("ip").debianPackage, "iproute2");
  });
});
