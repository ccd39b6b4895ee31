/** `mesh-agent proxy` refuses to start without what it needs, naming it, before it serves anything. */
import assert from "node:assert/strict";
import { runProgram } from "./helpers/programs.ts";

Deno.test("mesh-agent proxy with a missing proxy binary exits 1 naming the path and the setting", async () => {
  const result = await runProgram("mesh-agent", ["proxy"], {
    POD_NAME: "app-1",
    POD_NAMESPACE: "example",
    INSTANCE_IP: "10.9.9.9",
    PROXY_CONFIG: JSON.stringify({ binaryPath: "/nonexistent/envoy" }),
  });
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(
    result.stderr,
    /Cannot run the proxy binary "\/nonexistent\/envoy" \(ProxyConfig binaryPath\)/,
  );
  assert.doesNotMatch(result.stdout + result.stderr, /listening|bootstrap written/);
});

Deno.test("mesh-agent proxy with a broken --templateFile exits 1 naming the file and line, serving nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent_startup_e2e_" });
  try {
    await Deno.writeTextFile(`${dir}/bootstrap.tmpl`, '{\n  "node": {{ if .nodeID }}\n}\n');
    const result = await runProgram("mesh-agent", ["proxy", "--templateFile", `${dir}/bootstrap.tmpl`], {
      POD_NAME: "app-1",
      POD_NAMESPACE: "example",
      INSTANCE_IP: "10.9.9.9",
      PROXY_CONFIG: JSON.stringify({ binaryPath: "/bin/sh", configPath: `${dir}/proxy` }),
    });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, new RegExp(`${dir}/bootstrap\\.tmpl:2: missing \\{\\{ end \\}\\}`));
    assert.doesNotMatch(result.stdout + result.stderr, /listening/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mesh-agent proxy with a bad JSON setting for its status port exits 1 naming the field, serving nothing", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "agent_startup_e2e_" });
  const env = {
    POD_NAME: "app-1",
    POD_NAMESPACE: "example",
    INSTANCE_IP: "10.9.9.9",
    PROXY_CONFIG: JSON.stringify({ binaryPath: "/bin/sh", configPath: `${dir}/proxy` }),
  };
  try {
    await t.step("a probe on a named port", async () => {
      const result = await runProgram("mesh-agent", ["proxy"], {
        ...env,
        MESH_ORCH_APP_PROBERS: JSON.stringify({ "/app-health/app/livez": { httpGet: { port: "http" } } }),
      });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(
        result.stderr,
        /MESH_ORCH_APP_PROBERS\["\/app-health\/app\/livez"\]\.httpGet\.port is invalid: expected an integer port/,
      );
      assert.doesNotMatch(result.stdout + result.stderr, /listening|bootstrap written/);
    });
    await t.step("application metrics on the status port itself", async () => {
      const result = await runProgram("mesh-agent", ["proxy"], {
        ...env,
        MESH_METRICS_ANNOTATIONS: JSON.stringify({ scrape: "true", port: "15020" }),
      });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(
        result.stderr,
        /MESH_METRICS_ANNOTATIONS\.port is invalid: expected a port other than the status port 15020/,
      );
      assert.doesNotMatch(result.stdout + result.stderr, /listening|bootstrap written/);
    });
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing was written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mesh-agent proxy with a --templateFile that is not there exits 1 naming the flag and the path", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent_startup_e2e_" });
  try {
    const result = await runProgram("mesh-agent", ["proxy", "--templateFile", `${dir}/absent.tmpl`], {
      POD_NAME: "app-1",
      POD_NAMESPACE: "example",
      INSTANCE_IP: "10.9.9.9",
      PROXY_CONFIG: JSON.stringify({ binaryPath: "/bin/sh", configPath: `${dir}/proxy` }),
    });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, new RegExp(`Cannot read --templateFile "${dir}/absent\\.tmpl"`));
    assert.doesNotMatch(result.stdout + result.stderr, /listening|bootstrap written/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mesh-agent proxy refuses a CA or token plugin it cannot use, naming the setting, serving nothing", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "agent_startup_e2e_" });
  const env = {
    POD_NAME: "app-1",
    POD_NAMESPACE: "example",
    INSTANCE_IP: "10.9.9.9",
    PROXY_CONFIG: JSON.stringify({ binaryPath: "/bin/sh", configPath: `${dir}/proxy` }),
  };
  try {
    await t.step("--stsPort with CloudTokenExchange and no CLOUD_METADATA", async () => {
      const result = await runProgram("mesh-agent", ["proxy", "--stsPort", "15463"], env);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(result.stderr, /CloudTokenExchange needs the project number: set CLOUD_METADATA/);
      assert.doesNotMatch(result.stdout + result.stderr, /listening|bootstrap written/);
    });
    await t.step("a CA_PROVIDER that names no CA this agent can ask", async () => {
      const result = await runProgram("mesh-agent", ["proxy"], { ...env, CA_PROVIDER: "GoogleCA" });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(
        result.stderr,
        /CA_PROVIDER="GoogleCA" is not a CA this agent can ask: expected one of "Builtin"/,
      );
      assert.doesNotMatch(result.stdout + result.stderr, /listening|bootstrap written/);
    });
    await t.step("CREDENTIAL_FETCHER_TYPE=GoogleComputeEngine, a cloud-only token source", async () => {
      const result = await runProgram("mesh-agent", ["proxy"], {
        ...env,
        CREDENTIAL_FETCHER_TYPE: "GoogleComputeEngine",
      });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(
        result.stderr,
        /CREDENTIAL_FETCHER_TYPE="GoogleComputeEngine" fetches the VM identity token/,
      );
      assert.doesNotMatch(result.stdout + result.stderr, /listening|bootstrap written/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
