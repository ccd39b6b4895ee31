import assert from "node:assert/strict";
import { KUBECTL, needs } from "./system_tools.ts";
import { OrchApiServer } from "./orch_api_server.ts";

async function kubectl(
  dir: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("kubectl", {
    args: ["--kubeconfig", `${dir}/kubeconfig`, "--cache-dir", `${dir}/cache`, ...args],
    env: { HOME: dir },
    stdin: "null",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

const SERVICE_YAML = `apiVersion: v1
kind: Service
metadata:
  name: greeter
  namespace: example
spec:
  ports:
  - name: grpc
    port: 7070
`;

Deno.test(
  "kubectl gets, applies and deletes objects through the test API server",
  needs(KUBECTL),
  async (t) => {
    const api = OrchApiServer.start();
    const dir = await Deno.makeTempDir({ prefix: "mesh_kubectl_" });
    try {
      await Deno.writeTextFile(`${dir}/kubeconfig`, api.kubeconfig());
      await Deno.writeTextFile(`${dir}/svc.yaml`, SERVICE_YAML);
      api.apply({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "ratings", namespace: "example" },
        spec: {},
      });

      await t.step("get lists what the server holds", async () => {
        const got = await kubectl(dir, "get", "services", "-A", "-o", "json");
        assert.equal(got.code, 0, got.stderr);
        const names = (JSON.parse(got.stdout).items as { metadata: { name: string } }[]).map((i) =>
          i.metadata.name
        );
        assert.deepEqual(names, ["ratings"]);
      });
      await t.step("apply creates an object the server then serves", async () => {
        const applied = await kubectl(dir, "apply", "--validate=false", "-f", `${dir}/svc.yaml`);
        assert.equal(applied.code, 0, applied.stderr);
        const got = await kubectl(dir, "get", "service", "greeter", "-n", "example", "-o", "json");
        assert.equal(got.code, 0, got.stderr);
        assert.equal(JSON.parse(got.stdout).spec.ports[0].port, 7070);
      });
      await t.step("apply of a changed file patches the object", async () => {
        await Deno.writeTextFile(`${dir}/svc.yaml`, SERVICE_YAML.replace("7070", "7071"));
        const applied = await kubectl(dir, "apply", "--validate=false", "-f", `${dir}/svc.yaml`);
        assert.equal(applied.code, 0, applied.stderr);
        const got = await kubectl(dir, "get", "service", "greeter", "-n", "example", "-o", "json");
        assert.equal(JSON.parse(got.stdout).spec.ports[0].port, 7071);
      });
      await t.step("delete removes it", async () => {
        const deleted = await kubectl(dir, "delete", "--wait=false", "-f", `${dir}/svc.yaml`);
        assert.equal(deleted.code, 0, deleted.stderr);
        const got = await kubectl(dir, "get", "service", "greeter", "-n", "example");
        assert.notEqual(got.code, 0);
        assert.match(got.stderr, /not found/);
      });
    } finally {
      await api.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("A watch from an expired resource version gets 410 Gone; from a kept one, the events since", async () => {
  const api = OrchApiServer.start();
  try {
    const svc = (name: string) => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "ns" },
    });
    api.apply(svc("a"));
    const after = api.resourceVersion;
    api.apply(svc("b"));
    const read = async (rv: string) => {
      const response = await fetch(`${api.url}/api/v1/services?watch=true&resourceVersion=${rv}`);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      const { value } = await reader.read();
      await reader.cancel();
      return JSON.parse(value!.split("\n")[0]);
    };
    const since = await read(after);
    assert.equal(since.type, "ADDED");
    assert.equal(since.object.metadata.name, "b");
    api.compact();
    const gone = await read(after);
    assert.equal(gone.type, "ERROR");
    assert.equal(gone.object.code, 410);
  } finally {
    await api.close();
  }
});
