import assert from "node:assert/strict";
import { ConfigDirState } from "./config_dir_state.ts";
import { loadConfigText, unreadableFile } from "./config_file_load.ts";

function gateway(name: string, port: number | string, namespace = "default"): string {
  return `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  selector:
    app: gw
  servers:
  - port: {number: ${port}, name: http, protocol: HTTP}
    hosts: ["*"]
`;
}

function portOf(state: ConfigDirState, key: string): unknown {
  const doc = state.view().resources.get(key);
  return (doc?.resource.spec as { servers: { port: { number: number } }[] } | undefined)?.servers[0].port
    .number;
}

Deno.test("ConfigDirState keeps the last good version of a rejected document", async (t) => {
  const state = new ConfigDirState();
  const file = "gw.yaml";
  state.update(loadConfigText(file, `${gateway("a", 80)}---\n${gateway("b", 81)}`, "default"));

  await t.step("a document that turns invalid keeps serving its previous version", () => {
    state.update(loadConfigText(file, `${gateway("a", "eighty")}---\n${gateway("b", 82)}`, "default"));
    const view = state.view();
    assert.equal(portOf(state, "Gateway/default/a"), 80);
    assert.equal(portOf(state, "Gateway/default/b"), 82);
    assert.equal(view.rejections.length, 1);
    assert.ok(view.warnings.some((w) => w.message.includes("still serving its last good version")));
  });

  await t.step("the kept version survives further reads while the document stays invalid", () => {
    state.update(loadConfigText(file, `${gateway("a", "eighty")}---\n${gateway("b", 83)}`, "default"));
    assert.equal(portOf(state, "Gateway/default/a"), 80);
  });

  await t.step("fixing the document serves the fixed version and clears the rejection", () => {
    state.update(loadConfigText(file, `${gateway("a", 8080)}---\n${gateway("b", 83)}`, "default"));
    assert.equal(portOf(state, "Gateway/default/a"), 8080);
    assert.deepEqual(state.view().rejections, []);
    assert.deepEqual(state.view().warnings, []);
  });

  await t.step("a rejected document that no longer names its resource keeps its slot's last version", () => {
    const nameless = gateway("a", 80).replace("  name: a\n", "");
    state.update(loadConfigText(file, `${nameless}---\n${gateway("b", 83)}`, "default"));
    assert.equal(portOf(state, "Gateway/default/a"), 8080);
  });

  await t.step("an invalid document without an earlier good version serves nothing", () => {
    state.update(loadConfigText(file, `${gateway("c", "x")}`, "default"));
    assert.deepEqual([...state.view().resources.keys()], []);
  });
});

Deno.test("ConfigDirState never lets an unparsable file remove config", () => {
  const state = new ConfigDirState();
  state.update(loadConfigText("a.yaml", gateway("a", 80), "default"));
  state.update(loadConfigText("a.yaml", "kind: Gateway\nmetadata: {name: [", "default"));
  assert.equal(portOf(state, "Gateway/default/a"), 80);
  assert.equal(state.view().rejections[0].reason, "yaml_decode_error");
  assert.ok(state.view().warnings[0].message.includes("cannot be parsed"));
  state.update(unreadableFile("a.yaml", 1, ["a.yaml:1: cannot read the file: permission denied"]));
  assert.equal(portOf(state, "Gateway/default/a"), 80);
});

Deno.test("ConfigDirState removes a deleted file's resources", () => {
  const state = new ConfigDirState();
  state.update(loadConfigText("a.yaml", gateway("a", 80), "default"));
  state.update(loadConfigText("b.yaml", gateway("b", 80), "default"));
  state.remove("a.yaml");
  assert.deepEqual([...state.view().resources.keys()], ["Gateway/default/b"]);
  assert.deepEqual(state.files(), ["b.yaml"]);
});

Deno.test("ConfigDirState resolves duplicates to the first file name and line, with a warning", async (t) => {
  const state = new ConfigDirState();
  state.update(loadConfigText("z/late.yaml", gateway("same", 90), "default"));
  state.update(
    loadConfigText("a/early.yaml", `${gateway("other", 1)}---\n${gateway("same", 70)}`, "default"),
  );

  await t.step("the lexicographically first file wins regardless of read order", () => {
    assert.equal(portOf(state, "Gateway/default/same"), 70);
    const [warning] = state.view().warnings;
    assert.equal(warning.file, "z/late.yaml");
    assert.match(
      warning.message,
      /duplicate Gateway default\/same ignored; a\/early\.yaml:13 defines it too/,
    );
  });

  await t.step("within one file, the first line wins", () => {
    state.update(
      loadConfigText("a/early.yaml", `${gateway("same", 71)}---\n${gateway("same", 72)}`, "default"),
    );
    assert.equal(portOf(state, "Gateway/default/same"), 71);
  });

  await t.step("when the winner goes away, the duplicate takes over", () => {
    state.remove("a/early.yaml");
    assert.equal(portOf(state, "Gateway/default/same"), 90);
    assert.deepEqual(state.view().warnings, []);
  });
});

Deno.test("ConfigDirState keeps a file's resources while it is zero bytes long", () => {
  const state = new ConfigDirState();
  state.update(loadConfigText("a.yaml", gateway("a", 80), "default"));
  state.update(loadConfigText("a.yaml", "", "default"));
  assert.equal(portOf(state, "Gateway/default/a"), 80);
  assert.match(state.view().warnings[0].message, /a\.yaml is empty; still serving Gateway default\/a/);
  state.update(loadConfigText("b.yaml", "", "default"));
  assert.deepEqual(state.view().rejections, []);
  state.update(loadConfigText("a.yaml", "# nothing here any more\n", "default"));
  assert.deepEqual([...state.view().resources.keys()], []);
});

Deno.test("ConfigDirState names the keys a read may have changed and the document that wins each", () => {
  const state = new ConfigDirState();
  state.update(loadConfigText("/c/b.yaml", `${gateway("a", 80)}---\n${gateway("b", 81)}`, "default"));
  const [keyA, keyB] = [...state.view().resources.keys()];
  assert.deepEqual([...state.takeTouched()].sort(), [keyA, keyB]);
  state.update(loadConfigText("/c/a.yaml", gateway("a", 82), "default"));
  assert.deepEqual([...state.takeTouched()], [keyA], "only what the read file defines");
  assert.equal(state.winner(keyA)?.file, "/c/a.yaml", "the first by file name wins");
  assert.deepEqual([...state.takeTouched()], [], "taken once");
  state.remove("/c/a.yaml");
  assert.deepEqual([...state.takeTouched()], [keyA]);
  assert.equal(state.winner(keyA)?.file, "/c/b.yaml");
  assert.equal(state.winner("Gateway/default/none"), undefined);
});

Deno.test("ConfigDirState answers a winner query without reading the documents of unrelated files", () => {
  const state = new ConfigDirState();
  let keyReads = 0;
  /** The load of `file` with its documents' keys counted whenever read. */
  const counted = (file: string, text: string) => {
    const load = loadConfigText(file, text, "default");
    const documents = load.documents.map((doc) => {
      const { key, ...rest } = doc;
      return {
        ...rest,
        get key() {
          keyReads++;
          return key;
        },
      };
    });
    return { ...load, documents };
  };
  for (let i = 0; i < 50; i++) state.update(counted(`other-${i}.yaml`, gateway(`other-${i}`, 80)));
  state.update(loadConfigText("b.yaml", gateway("wanted", 81), "default"));
  state.update(loadConfigText("a.yaml", gateway("wanted", 82), "default"));
  keyReads = 0;
  const winner = state.winner("Gateway/default/wanted");
  assert.equal(winner?.file, "a.yaml");
  assert.equal(keyReads, 0);
  assert.equal(state.winner("Gateway/default/other-7")?.file, "other-7.yaml");
  assert.equal(state.winner("Gateway/default/missing"), undefined);
});

Deno.test("ConfigDirState's winner follows files updated, emptied of a resource and removed", () => {
  const state = new ConfigDirState();
  state.update(loadConfigText("a.yaml", gateway("g", 80), "default"));
  state.update(loadConfigText("b.yaml", gateway("g", 81), "default"));
  assert.equal(state.winner("Gateway/default/g")?.file, "a.yaml");
  state.update(loadConfigText("a.yaml", gateway("h", 80), "default"));
  assert.equal(state.winner("Gateway/default/g")?.file, "b.yaml");
  assert.equal(state.winner("Gateway/default/h")?.file, "a.yaml");
  state.remove("b.yaml");
  assert.equal(state.winner("Gateway/default/g"), undefined);
  assert.deepEqual([...state.view().resources.keys()], ["Gateway/default/h"]);
});
