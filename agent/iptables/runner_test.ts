import assert from "node:assert/strict";

import { buildIptablesPlan } from "./build_plan.ts";
import { buildCleanCommands, sweepScript } from "./clean_plan.ts";
import { iptablesConfig, type IptablesOptions } from "./config.ts";
import { CommandFailedError, CommandNotFoundError, type CommandResult } from "./executor.ts";
import { commandLine, renderCommands, renderDryRun, renderRestore } from "./render.ts";
import { applyIptables, cleanIptables, type RunnerDeps } from "./runner.ts";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";

interface Call {
  line: string;
  stdin?: string;
}

const OK: CommandResult = { code: 0, stdout: "", stderr: "" };
const STALE = "*nat\n:OUTPUT ACCEPT [0:0]\n:MESH_OUTPUT - [0:0]\n" +
  "-A OUTPUT -p tcp -m comment --comment mesh-capture -j MESH_OUTPUT\nCOMMIT\n";

/** Records every call; `answer` decides each result (default: success with no output). */
function harness(answer: (line: string, stdin?: string) => CommandResult | Error = () => OK) {
  const calls: Call[] = [];
  const printed: string[] = [];
  const logger = new RecordingLogger();
  const deps: RunnerDeps = {
    logger,
    print: (text) => printed.push(text),
    exec: (cmd, args, stdin) => {
      const line = [cmd, ...args].join(" ");
      calls.push(stdin === undefined ? { line } : { line, stdin });
      const result = answer(line, stdin);
      return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
    },
  };
  return { calls, printed, logger, deps };
}

const config = (options: IptablesOptions) => iptablesConfig(options);

Deno.test("A dry run prints the plan and calls nothing", async (t) => {
  await t.step("as commands", async () => {
    const h = harness();
    const cfg = config({ dryRun: true, inboundPorts: "*", runValidation: true });
    const outcome = await applyIptables(cfg, h.deps);
    assert.deepEqual(h.calls, []);
    assert.deepEqual(h.printed, [renderCommands(buildIptablesPlan(cfg))]);
    assert.equal(outcome.applied, false);
    assert.ok(
      h.logger.lines.some((entry) => entry.level === "warn" && entry.msg.includes("validation skipped")),
    );
  });
  await t.step("as iptables-restore input with --restore-format", async () => {
    const h = harness();
    const cfg = config({ dryRun: true, restoreFormat: true, serviceCidrs: ["fd00::/8"] });
    await applyIptables(cfg, h.deps);
    assert.deepEqual(h.calls, []);
    assert.equal(h.printed[0], renderDryRun(buildIptablesPlan(cfg), true));
    assert.match(h.printed[0], /^ip -6 addr add ::6\/128 dev lo\n# iptables-restore --noflush\n\*nat\n/);
    assert.match(h.printed[0], /\n# ip6tables-restore --noflush\n\*nat\n/);
  });
  await t.step("for clean", async () => {
    const h = harness();
    const cfg = config({ dryRun: true });
    await cleanIptables(cfg, h.deps);
    assert.deepEqual(h.calls, []);
    assert.equal(
      h.printed[0],
      buildCleanCommands(cfg).map((command) => `${commandLine(command)}\n`).join(""),
    );
  });
});

Deno.test("--skip-rule-apply builds the rules without running anything", async () => {
  const h = harness();
  const outcome = await applyIptables(config({ skipRuleApply: true }), h.deps);
  assert.deepEqual(h.calls, []);
  assert.equal(outcome.applied, false);
  assert.ok(h.logger.lines.some((entry) => entry.msg.includes("--skip-rule-apply")));
});

Deno.test("Applying cleans stale rules, then restores with --noflush and logs iptables-save", async () => {
  let saves = 0;
  const h = harness((line) => {
    if (line === "iptables-save") return { ...OK, stdout: saves++ === 0 ? STALE : "*nat\nCOMMIT\n" };
    if (line === "ip6tables-save") return new CommandNotFoundError("ip6tables-save");
    if (line.startsWith("ip ") && line.includes(" del ")) {
      return { code: 2, stdout: "", stderr: "No such process" };
    }
    return OK;
  });
  const cfg = config({ interceptionMode: "TPROXY", inboundPorts: [80] });
  const outcome = await applyIptables(cfg, h.deps);
  assert.deepEqual(h.calls, [
    { line: "iptables-save" },
    { line: "iptables-restore --noflush", stdin: sweepScript(STALE) },
    { line: "ip6tables-save" },
    { line: "ip -f inet rule del fwmark 1337 lookup 133" },
    { line: "ip -f inet route del local default dev lo table 133" },
    { line: "ip -6 addr del ::6/128 dev lo" },
    { line: "ip -f inet rule add fwmark 1337 lookup 133" },
    { line: "ip -f inet route add local default dev lo table 133" },
    { line: "iptables-restore --noflush", stdin: renderRestore(buildIptablesPlan(cfg).v4) },
    { line: "iptables-save" },
  ]);
  assert.equal(outcome.applied, true);
  assert.ok(
    h.logger.lines.some((entry) =>
      entry.msg === "Skipping IPv6 cleanup: " + new CommandNotFoundError("ip6tables-save").message
    ),
  );
  assert.ok(h.logger.lines.some((entry) => entry.msg === "iptables-save after the change"));
});

Deno.test("Applying with IPv6 restores both families", async () => {
  const h = harness();
  const cfg = config({ serviceCidrs: ["10.0.0.0/8", "fd00::/8"] });
  await applyIptables(cfg, h.deps);
  const plan = buildIptablesPlan(cfg);
  const restores = h.calls.filter((call) => call.line.includes("-restore"));
  assert.deepEqual(restores, [
    { line: "iptables-restore --noflush", stdin: renderRestore(plan.v4) },
    { line: "ip6tables-restore --noflush", stdin: renderRestore(plan.v6!) },
  ]);
  assert.ok(h.calls.some((call) => call.line === "ip -6 addr add ::6/128 dev lo"));
  assert.deepEqual(h.calls.slice(-2), [{ line: "iptables-save" }, { line: "ip6tables-save" }]);
});

Deno.test("Apply errors say what failed and what to do", async (t) => {
  await t.step("missing iptables names the Debian package", async () => {
    const h = harness((line) =>
      line.startsWith("iptables") ? new CommandNotFoundError(line.split(" ")[0]) : OK
    );
    await assert.rejects(
      applyIptables(config({}), h.deps),
      (error: Error) => {
        assert.ok(error instanceof CommandNotFoundError);
        assert.equal(error.debianPackage, "iptables");
        assert.match(
          error.message,
          /^Command "iptables-save" was not found on PATH: install the Debian package "iptables"/,
        );
        return true;
      },
    );
  });
  await t.step("missing ip6tables when IPv6 is enabled is an error too", async () => {
    const h = harness((line) =>
      line.startsWith("ip6tables") ? new CommandNotFoundError(line.split(" ")[0]) : OK
    );
    await assert.rejects(applyIptables(config({ podIps: ["fd00::2"] }), h.deps), CommandNotFoundError);
  });
  await t.step("a rejected restore names the input line", async () => {
    const h = harness((line, stdin) =>
      line === "iptables-restore --noflush" && stdin?.includes("MESH_INBOUND")
        ? { code: 1, stdout: "", stderr: "iptables-restore: line 3 failed\n" }
        : OK
    );
    await assert.rejects(applyIptables(config({}), h.deps), (error: Error) => {
      assert.ok(error instanceof CommandFailedError);
      assert.equal(
        error.message,
        'Command "iptables-restore --noflush" failed with exit code 1: iptables-restore: line 3 failed ' +
          '(input line 3: ":MESH_REDIRECT - [0:0]")',
      );
      return true;
    });
  });
  await t.step("a failing ip command stops the apply before any rule is restored", async () => {
    const h = harness((line) =>
      line.startsWith("ip -f inet rule add") ? { code: 2, stdout: "", stderr: "boom" } : OK
    );
    await assert.rejects(
      applyIptables(config({ interceptionMode: "TPROXY", inboundPorts: "*" }), h.deps),
      /boom/,
    );
    assert.ok(
      !h.calls.some((call) =>
        call.line === "iptables-restore --noflush" && call.stdin?.includes("MESH_TPROXY")
      ),
    );
  });
  await t.step("validation needs the identity of this process", async () => {
    const h = harness();
    await assert.rejects(
      applyIptables(config({ runValidation: true, skipRuleApply: true }), h.deps),
      /identity \(uid and gid of this process\) is required with --run-validation/,
    );
  });
});

Deno.test("Cleaning sweeps both families and removes every duplicate ip rule", async () => {
  let ruleDeletes = 0;
  const h = harness((line) => {
    if (line.endsWith("-save")) return { ...OK, stdout: STALE };
    if (line.startsWith("ip -f inet rule del")) {
      return ++ruleDeletes <= 2 ? OK : { code: 2, stdout: "", stderr: "gone" };
    }
    return OK;
  });
  await cleanIptables(config({}), h.deps);
  assert.deepEqual(h.calls.map((call) => call.line), [
    "iptables-save",
    "iptables-restore --noflush",
    "ip6tables-save",
    "ip6tables-restore --noflush",
    "ip -f inet rule del fwmark 1337 lookup 133",
    "ip -f inet rule del fwmark 1337 lookup 133",
    "ip -f inet rule del fwmark 1337 lookup 133",
    "ip -f inet route del local default dev lo table 133",
    "ip -6 addr del ::6/128 dev lo",
    "iptables-save",
    "ip6tables-save",
  ]);
});

Deno.test("Cleaning tolerates a missing ip tool and unreadable IPv6 tables", async () => {
  const h = harness((line) => {
    if (line.startsWith("ip ")) return new CommandNotFoundError("ip");
    if (line === "ip6tables-save") return { code: 1, stdout: "", stderr: "Protocol not supported" };
    return OK;
  });
  await cleanIptables(config({}), h.deps);
  const warnings = h.logger.lines.filter((entry) => entry.level === "warn").map((entry) => entry.msg);
  assert.ok(warnings.some((msg) => msg.startsWith("Skipping IPv6 cleanup")), warnings.join("\n"));
  assert.ok(
    warnings.some((msg) => msg.includes('install the Debian package "iproute2"')),
    warnings.join("\n"),
  );
});
