import assert from "node:assert/strict";
import { type CommandContext, type CommandSpec, UsageError } from "./command_spec.ts";
import type { FlagSpec } from "./flag_spec.ts";
import { runCli } from "./run_cli.ts";

const INHERITED: FlagSpec[] = [
  { name: "log_as_json", type: "bool", default: false, help: "json" },
  { name: "log_target", type: "stringArray", default: ["stdout"], help: "targets" },
];

function tree(seen: CommandContext[]): CommandSpec {
  const record = (ctx: CommandContext) => {
    seen.push(ctx);
    return 0;
  };
  return {
    name: "prog",
    summary: "A program",
    subcommands: [
      {
        name: "serve",
        summary: "Serve",
        flags: [
          { name: "port", short: "p", type: "uint16", default: 9876, help: "port" },
          { name: "resync", type: "duration", default: 60_000_000_000n, help: "resync" },
          { name: "plugins", type: "stringSlice", default: ["a", "b"], help: "plugins" },
          { name: "short", short: "s", type: "bool", default: true, help: "short" },
          { name: "qps", type: "float32", default: 20, help: "qps" },
        ],
        run: record,
      },
      {
        name: "request",
        summary: "Request",
        args: [{ name: "method", required: true }, { name: "path", required: true }, {
          name: "body",
          required: false,
        }],
        run: record,
      },
      {
        name: "fail",
        summary: "Fails with a usage error",
        run(ctx) {
          throw new UsageError("bad combination", ctx.path);
        },
      },
    ],
  };
}

async function run(argv: string[]) {
  const seen: CommandContext[] = [];
  let out = "";
  let err = "";
  const code = await runCli(tree(seen), INHERITED, argv, {
    stdout: (t) => out += t,
    stderr: (t) => err += t,
  });
  return { code, out, err, ctx: seen[0] };
}

Deno.test("runCli applies defaults and typed values", async (t) => {
  await t.step("defaults", async () => {
    const { code, ctx } = await run(["serve"]);
    assert.equal(code, 0);
    assert.deepEqual({ ...ctx.flags }, {
      log_as_json: false,
      log_target: ["stdout"],
      port: 9876,
      resync: 60_000_000_000n,
      plugins: ["a", "b"],
      short: true,
      qps: 20,
    });
    assert.equal(ctx.explicit.size, 0);
  });
  await t.step("typed values, short names and = forms", async () => {
    const { ctx } = await run([
      "serve",
      "-p",
      "80",
      "--resync=1m30s",
      "--plugins",
      "x,y",
      "--qps",
      "0.5",
      "--log_as_json",
    ]);
    assert.equal(ctx.flags.port, 80);
    assert.equal(ctx.flags.resync, 90_000_000_000n);
    assert.deepEqual(ctx.flags.plugins, ["x", "y"]);
    assert.equal(ctx.flags.qps, 0.5);
    assert.equal(ctx.flags.log_as_json, true);
    assert.ok(ctx.explicit.has("port") && ctx.explicit.has("resync"));
  });
  await t.step("boolean flags take =false and =true", async () => {
    assert.equal((await run(["serve", "--short=false"])).ctx.flags.short, false);
    assert.equal((await run(["serve", "-s=false"])).ctx.flags.short, false);
    assert.equal((await run(["serve", "--short=true"])).ctx.flags.short, true);
    assert.equal((await run(["serve", "--log_as_json=1"])).ctx.flags.log_as_json, true);
  });
  await t.step("string arrays repeat and slices accumulate", async () => {
    const { ctx } = await run([
      "serve",
      "--log_target",
      "stderr",
      "--log_target",
      "/tmp/x.log",
      "--plugins",
      "a",
      "--plugins",
      "b,c",
    ]);
    assert.deepEqual(ctx.flags.log_target, ["stderr", "/tmp/x.log"]);
    assert.deepEqual(ctx.flags.plugins, ["a", "b", "c"]);
  });
  await t.step("positional arguments", async () => {
    const { ctx } = await run(["request", "GET", "/debug/registryz"]);
    assert.deepEqual(ctx.args, ["GET", "/debug/registryz"]);
  });
});

Deno.test("runCli rejects bad input with Error: and a usage hint, exit 1", async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [["serve", "--nope"], /^Error: unknown flag: --nope/],
    [["serve", "--port", "70000"], /^Error: invalid argument "70000" for "--port" flag: .*0 to 65535/],
    [
      ["serve", "--resync", "soon"],
      /^Error: invalid argument "soon" for "--resync" flag: Invalid duration "soon"/,
    ],
    [["serve", "--short=maybe"], /^Error: invalid argument "maybe" for "--short" flag/],
    [["serve", "--qps", "fast"], /^Error: invalid argument "fast" for "--qps" flag/],
    [["bogus"], /^Error: unknown command "bogus"/],
    [["request", "GET"], /^Error: missing required argument 'path'/],
    [["request", "GET", "/", "body", "extra"], /^Error: too many arguments/],
    [["fail"], /^Error: bad combination/],
  ];
  for (const [argv, pattern] of cases) {
    await t.step(argv.join(" "), async () => {
      const { code, err, ctx } = await run(argv);
      assert.equal(code, 1);
      assert.equal(ctx?.path === undefined || argv[0] === "fail", true);
      assert.match(err, pattern);
      assert.match(err, /\nRun 'prog( \w+)? --help' for usage\.\n$/);
    });
  }
});

Deno.test("runCli prints help with defaults at every level", async (t) => {
  await t.step("root lists subcommands and inherited flags", async () => {
    const { code, out } = await run(["--help"]);
    assert.equal(code, 0);
    assert.match(out, /serve/);
    assert.match(out, /request \[options\] <method> <path> \[body\]/);
    assert.match(out, /--log_target <stringArray>\s+targets \(default \[stdout\]\)/);
  });
  await t.step("subcommand help shows Go-style defaults", async () => {
    const { code, out } = await run(["serve", "--help"]);
    assert.equal(code, 0);
    assert.match(out, /-p, --port <uint16>\s+port \(default 9876\)/);
    assert.match(out, /--resync <duration>\s+resync \(default 1m0s\)/);
    assert.match(out, /--plugins <strings>\s+plugins \(default \[a,b\]\)/);
    assert.match(out, /-s, --short\s+short \(default true\)/);
    assert.doesNotMatch(out, /--no-short/);
  });
});

Deno.test("runCli accepts inherited flags before the subcommand name", async () => {
  const { code, ctx } = await run(["--log_as_json", "--log_target", "stderr", "serve"]);
  assert.equal(code, 0);
  assert.equal(ctx.flags.log_as_json, true);
  assert.deepEqual(ctx.flags.log_target, ["stderr"]);
  assert.ok(ctx.explicit.has("log_as_json"));
});
