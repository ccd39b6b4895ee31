import assert from "node:assert/strict";
import { discoveryAddresses, discoveryArgs, type RunningProgram, startProgram } from "./helpers/programs.ts";
import { waitFor } from "../shared/testing/wait_for.ts";

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
    else await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

/** Polls `probe` every 100 ms for up to 30 s: the program reacts to file events on its own time. */
function eventually(probe: () => Promise<boolean>, what: string): Promise<void> {
  return waitFor(probe, what, 30_000, 100);
}

/** A copy of examples/config under a new temp folder, and mesh-discovery serving it (Mock registry). */
async function serveExamplesCopy(prefix: string) {
  const root = await Deno.makeTempDir({ prefix });
  const dir = `${root}/config`;
  await copyTree("examples/config", dir);
  const addresses = discoveryAddresses();
  const server = startProgram(
    "mesh-discovery",
    discoveryArgs(addresses, ["--registries", "Mock", "--configDir", dir, "--log_as_json"]),
  );
  return { root, dir, addresses, server };
}

Deno.test("mesh-discovery is not ready while --configDir is gone, and serves the directory put back", async (t) => {
  const { root, dir, addresses, server } = await serveExamplesCopy("config_dir_e2e_");
  const ready = async () => {
    const response = await fetch(`http://${addresses.httpAddr}/ready`);
    await response.body?.cancel();
    return response.status === 200;
  };
  const resources = async () => {
    const response = await fetch(`http://${addresses.httpAddr}/debug/configz`);
    return ((await response.json()).resources as unknown[]).length;
  };
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    const loaded = await resources();
    assert.ok(loaded > 0);
    assert.equal(await ready(), true);

    await t.step("rm -rf: not ready, the loaded config still served", async () => {
      await Deno.remove(dir, { recursive: true });
      await eventually(async () => !(await ready()), "/ready to fail");
      assert.equal(await resources(), loaded);
    });
    await t.step("mkdir and copy back: ready again with every resource", async () => {
      await copyTree("examples/config", dir);
      await eventually(async () => await ready() && await resources() === loaded, "the copied-back config");
    });
    await t.step("renamed away and a populated copy renamed in: later edits are served", async () => {
      await copyTree("examples/config", `${root}/next`);
      await Deno.remove(`${root}/next/services/greeter.yaml`);
      await Deno.rename(dir, `${root}/old`);
      await Deno.rename(`${root}/next`, dir);
      await eventually(async () => await resources() < loaded, "the renamed-in copy");
      await Deno.copyFile("examples/config/services/greeter.yaml", `${dir}/services/greeter.yaml`);
      await eventually(async () => await resources() === loaded, "an edit in the renamed-in directory");
    });
  } finally {
    await server.stop();
    await Deno.remove(root, { recursive: true });
  }
});

/** Stops `server` with SIGTERM; a hang becomes a failure: SIGKILL after 30 s, far beyond a usual shutdown. */
async function stopWithin30s(server: RunningProgram): Promise<Deno.CommandStatus> {
  let killed = false;
  const guard = setTimeout(() => {
    killed = true;
    server.child.kill("SIGKILL");
  }, 30_000);
  const status = await server.stop("SIGTERM");
  clearTimeout(guard);
  assert.equal(killed, false, "mesh-discovery was still running 30 s after SIGTERM");
  return status;
}

Deno.test("mesh-discovery keeps loading files after a FIFO appears in --configDir, and stops on SIGTERM", async () => {
  const { root, dir, addresses, server } = await serveExamplesCopy("config_dir_fifo_e2e_");
  const configz = async () => await (await fetch(`http://${addresses.httpAddr}/debug/configz`)).json();
  try {
    await server.waitFor(/"msg":"discovery server started"/);
    const loaded = (await configz()).resources.length;
    const mkfifo = await new Deno.Command("sh", { args: ["-c", 'mkfifo "$1"', "sh", `${dir}/x.yaml`] })
      .output();
    assert.equal(mkfifo.code, 0);
    await Deno.remove(`${dir}/services/greeter.yaml`);
    await eventually(async () => (await configz()).resources.length < loaded, "a removal after the FIFO");
  } finally {
    const status = await stopWithin30s(server);
    await Deno.remove(root, { recursive: true });
    assert.equal(status.code, 0);
  }
});
