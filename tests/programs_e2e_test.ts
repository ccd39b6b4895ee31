import assert from "node:assert/strict";
import YAML from "yaml";
import { discoveryAddresses, discoveryArgs, freePort, runProgram, startProgram } from "./helpers/programs.ts";

Deno.test("version prints the short version, full build info, JSON and YAML", async (t) => {
  for (const program of ["mesh-discovery", "mesh-agent"] as const) {
    await t.step(`${program} version`, async () => {
      const short = await runProgram(program, ["version"]);
      assert.equal(short.code, 0, short.stderr);
      assert.match(short.stdout, /^\d+\.\d+\.\d+\n$/);
      const full = await runProgram(program, ["version", "--short=false"]);
      assert.match(
        full.stdout,
        /^version\.BuildInfo\{Version:"\d+\.\d+\.\d+", GitRevision:"[^"]+", DenoVersion:"(\d+\.\d+\.\d+)"/,
      );
      // The programs run on the `deno` this test runs on, which is the pinned one in CI.
      assert.equal(full.stdout.match(/DenoVersion:"([^"]+)"/)?.[1], Deno.version.deno);
      const json = JSON.parse((await runProgram(program, ["version", "-o", "json", "--short=false"])).stdout);
      assert.equal(json.clientVersion.deno_version, Deno.version.deno);
      assert.ok(
        json.clientVersion.v8_version && json.clientVersion.typescript_version && json.clientVersion.tag,
      );
      const yaml = YAML.parse((await runProgram(program, ["version", "-o", "yaml"])).stdout);
      assert.match(yaml.clientVersion.version, /^\d+\.\d+\.\d+$/);
      const bad = await runProgram(program, ["version", "-o", "xml"]);
      assert.equal(bad.code, 1);
      assert.match(
        bad.stderr,
        /^Error: invalid --output "xml": expected 'yaml' or 'json'\nRun '.* version --help' for usage\.\n$/,
      );
    });
  }
});

Deno.test("Bad command lines print Error: with a usage hint and exit 1", async (t) => {
  const cases: Array<[Parameters<typeof runProgram>[0], string[], RegExp]> = [
    ["mesh-discovery", ["discovery", "--nope"], /^Error: unknown flag: --nope/],
    ["mesh-discovery", ["discovery", "--ctrlz_port", "70000"], /invalid argument "70000" for "--ctrlz_port"/],
    [
      "mesh-discovery",
      ["discovery", "--resync", "1x"],
      /invalid argument "1x" for "--resync" flag: Invalid duration/,
    ],
    ["mesh-discovery", ["nothing"], /^Error: unknown command "nothing"/],
    ["mesh-discovery", ["request", "GET"], /^Error: missing required argument 'path'/],
    ["mesh-agent", ["wait", "--timeoutSeconds", "soon"], /invalid argument "soon" for "--timeoutSeconds"/],
    ["mesh-agent", ["version", "--log_output_level"], /argument missing/],
  ];
  for (const [program, args, pattern] of cases) {
    await t.step(`${program} ${args.join(" ")}`, async () => {
      const result = await runProgram(program, args);
      assert.equal(result.code, 1, result.stdout);
      assert.match(result.stderr, pattern);
      assert.match(result.stderr, /Run 'mesh-(discovery|agent)[a-z -]*--help' for usage\.\n$/);
    });
  }
});

Deno.test("An invalid environment variable stops startup naming the variable, value and type", async () => {
  const result = await runProgram("mesh-discovery", ["discovery", "--registries", "Mock"], {
    DISCOVERY_DEBOUNCE_AFTER: "soon",
  });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /DISCOVERY_DEBOUNCE_AFTER="soon" is invalid: expected a duration/);
});

Deno.test("An unknown log scope stops startup with a clear error", async () => {
  const result = await runProgram("mesh-discovery", [
    "discovery",
    "--configDir",
    "examples/config",
    "--log_output_level",
    "nosuch:debug",
  ]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /--log_output_level "nosuch:debug": unknown scope "nosuch"/);
});

Deno.test("mesh-discovery serves readiness, debug paths and metrics on the example mesh", async (t) => {
  const addresses = discoveryAddresses({ monitoringAddr: "127.0.0.1:15014" });
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, [
      "--registries",
      "Mock",
      "--configDir",
      "examples/config",
      "--log_as_json",
    ]),
  );
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    await t.step("/ready answers 200 on --httpAddr once sources are synced", async () => {
      const res = await fetch(`http://${addresses.httpAddr}/ready`);
      assert.equal(res.status, 200, await res.text());
    });
    await t.step("request GET /debug/registryz lists the example services", async () => {
      const result = await runProgram("mesh-discovery", ["request", "GET", "/debug/registryz"]);
      assert.equal(result.code, 0, result.stderr);
      const hosts = JSON.parse(result.stdout).map((s: { hostname: string }) => s.hostname);
      assert.ok(hosts.includes("reviews.example.svc.cluster.local"), hosts.join(", "));
    });
    await t.step("every debug path of the index answers JSON on both ports", async () => {
      const index = await (await fetch(`http://${addresses.httpAddr}/debug`)).json();
      const paths: string[] = index.paths.map((p: { path: string }) => p.path);
      for (
        const path of [
          "/debug/configz",
          "/debug/endpointz",
          "/debug/endpointShardz",
          "/debug/push_status",
          "/debug/resourcesz",
          "/debug/instancesz",
          "/debug/mesh",
          "/debug/env",
          "/debug/registryz",
        ]
      ) {
        assert.ok(paths.includes(path), `${path} is missing from /debug`);
        for (const base of [addresses.httpAddr, addresses.monitoringAddr]) {
          const res = await fetch(`http://${base}${path}`);
          assert.equal(res.status, 200, `${base}${path}`);
          await res.json();
        }
      }
    });
    await t.step("/debug/mesh prints durations in Go form", async () => {
      const mesh = await (await fetch(`http://${addresses.httpAddr}/debug/mesh`)).json();
      assert.match(mesh.meshConfig.connectTimeout, /^\d+(ms|s|m)/);
    });
    await t.step("GET /metrics prints the Prometheus text", async () => {
      const result = await runProgram("mesh-discovery", ["request", "GET", "/metrics"]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^mesh_build\{component="discovery",tag="[^"]+"\} 1$/m);
      assert.match(result.stdout, /^# TYPE discovery_xds_push_time histogram$/m);
      assert.match(result.stdout, /^discovery_services 5$/m);
      assert.match(result.stdout, /^startup_duration_seconds \d/m);
    });
    await t.step("an error status exits non-zero showing status and body", async () => {
      const result = await runProgram("mesh-discovery", ["request", "GET", "/no/such/path"]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /GET \/no\/such\/path returned status 404/);
      assert.match(result.stderr, /No handler for path/);
    });
  } finally {
    const status = await server.stop();
    assert.equal(status.code, 0, server.stderr);
  }
  assert.match(server.stdout, /"msg":"shutting down","reason":"SIGTERM"/);
});

Deno.test("mesh-agent request reports clearly when nothing listens on the admin port", async () => {
  let probe: Deno.Listener | undefined;
  try {
    probe = Deno.listen({ hostname: "127.0.0.1", port: 15000 });
  } catch {
    throw new Error("Port 15000 is taken on this machine; the test needs it free to prove nothing listens");
  }
  probe.close();
  const result = await runProgram("mesh-agent", ["request", "GET", "/stats"]);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /^Error: Nothing is listening at http:\/\/127\.0\.0\.1:15000\/stats: .*Connection refused/,
  );
});

Deno.test("mesh-agent wait succeeds once the URL answers 200 and times out otherwise", async (t) => {
  let ready = false;
  const port = freePort();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port, onListen: () => {} },
    () => new Response(ready ? "ok" : "not yet", { status: ready ? 200 : 503 }),
  );
  try {
    await t.step("times out with the last error", async () => {
      const result = await runProgram("mesh-agent", [
        "wait",
        "--url",
        `http://127.0.0.1:${port}/healthz/ready`,
        "--timeoutSeconds",
        "1",
        "--periodMillis",
        "100",
      ]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /timeout waiting for the proxy to become ready.*last error: status 503/);
    });
    await t.step("returns 0 once ready", async () => {
      ready = true;
      const result = await runProgram("mesh-agent", [
        "wait",
        "--url",
        `http://127.0.0.1:${port}/healthz/ready`,
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /The proxy is ready after 1 attempt/);
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("mesh-discovery discovery refuses to start without a config source or orchestrator it can reach", async (t) => {
  await t.step("no --configDir", async () => {
    const result = await runProgram("mesh-discovery", ["discovery", "--registries", "Mock"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^Error: --configDir is required/);
  });
  await t.step("the Orchestrator registry without orchestrator configuration", async () => {
    const result = await runProgram("mesh-discovery", ["discovery", "--configDir", "examples/config"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^Error: No orchestrator configuration: give --orchconfig FILE/);
  });
  await t.step("an --orchconfig that does not exist", async () => {
    const result = await runProgram("mesh-discovery", [
      "discovery",
      "--orchconfig",
      "/nonexistent/kubeconfig",
    ]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^Error: --orchconfig \/nonexistent\/kubeconfig: no such file/);
  });
});
