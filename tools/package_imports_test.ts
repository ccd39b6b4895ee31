import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { exportKeyOf, packageSpecifier, rewriteSource, run } from "./package_imports.ts";

const members = [
  { dir: "shared", name: "@mesh/shared", configPath: "shared/deno.json", config: {} },
  { dir: "discovery", name: "@mesh/discovery", configPath: "discovery/deno.json", config: {} },
];

Deno.test("a module is exported under its path without extension, a mod.ts under its folder", () => {
  assert.deepEqual(exportKeyOf("env/env_vars.ts"), "./env/env_vars");
  assert.deepEqual(exportKeyOf("grpc/mod.ts"), "./grpc");
  assert.deepEqual(exportKeyOf("mod.ts"), ".");
  assert.deepEqual(packageSpecifier("@mesh/shared", "."), "@mesh/shared");
  assert.deepEqual(packageSpecifier("@mesh/shared", "./grpc"), "@mesh/shared/grpc");
});

Deno.test("imports that cross into another member are named by package, those inside one stay relative", () => {
  const source = [
    'import { a } from "../../shared/env/env_vars.ts";',
    'import type { B } from "../model/b.ts";',
    'export * from "../../shared/grpc/mod.ts";',
    'import "../../shared/log/setup.ts";',
    'const c = await import("../../shared/cli/run_cli.ts");',
    'type D = typeof import("../../shared/mod.ts");',
  ].join("\n");
  const wanted: string[] = [];
  const result = rewriteSource("discovery/xds/x.ts", source, members, (member, key, target) => {
    wanted.push(`${member.name} ${key} ${target}`);
  });
  assert.deepEqual(result.text.split("\n"), [
    'import { a } from "@mesh/shared/env/env_vars";',
    'import type { B } from "../model/b.ts";',
    'export * from "@mesh/shared/grpc";',
    'import "@mesh/shared/log/setup";',
    'const c = await import("@mesh/shared/cli/run_cli");',
    'type D = typeof import("@mesh/shared");',
  ]);
  assert.deepEqual(wanted, [
    "@mesh/shared ./env/env_vars ./env/env_vars.ts",
    "@mesh/shared ./grpc ./grpc/mod.ts",
    "@mesh/shared ./log/setup ./log/setup.ts",
    "@mesh/shared ./cli/run_cli ./cli/run_cli.ts",
    "@mesh/shared . ./mod.ts",
  ]);
  assert.deepEqual(rewriteSource("discovery/xds/x.ts", result.text, members, () => {}).changes, []);
});

Deno.test("code outside every member keeps its relative imports", () => {
  const source = 'import { a } from "../shared/env/env_vars.ts";';
  assert.deepEqual(rewriteSource("tests/x_test.ts", source, members, () => {}).text, source);
});

Deno.test("no workspace member imports another by relative path, and every import has its export", () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  assert.equal(run(root, true), 0, 'run "deno task imports:fix"');
});
