/**
 * What each program loads, read from the module graph `deno info` reports: the orchestrator's client library,
 * the largest the program has, comes in only through the dynamic imports of `discovery/orch/` that run when the
 * orchestrator is read, so a server in file mode and the agent never hold it.
 */
import assert from "node:assert/strict";

const ORCH_CLIENT = "@kubernetes/client-node";

interface GraphModule {
  readonly specifier: string;
  readonly dependencies?: readonly {
    readonly code?: { readonly specifier?: string };
    readonly isDynamic?: boolean;
  }[];
}

/** The program's module graph: each module's code imports, split into static and dynamic ones. */
async function moduleGraph(entry: string) {
  const output = await new Deno.Command("deno", {
    args: ["info", "--json", entry],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, `deno info ${entry}: ${new TextDecoder().decode(output.stderr)}`);
  const { roots, modules } = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    roots: string[];
    modules: GraphModule[];
  };
  const imports = new Map<string, { static: string[]; dynamic: string[] }>();
  for (const module of modules) {
    const edges = { static: [] as string[], dynamic: [] as string[] };
    for (const dependency of module.dependencies ?? []) {
      const target = dependency.code?.specifier;
      if (target !== undefined) (dependency.isDynamic ? edges.dynamic : edges.static).push(target);
    }
    imports.set(module.specifier, edges);
  }
  return { root: roots[0], imports };
}

/**
 * The first chain of imports from the root to a module naming `wanted`; `follows(target)` says whether a dynamic
 * import of `target` is followed (a static one always is).
 */
function pathTo(
  graph: Awaited<ReturnType<typeof moduleGraph>>,
  wanted: string,
  follows: (target: string) => boolean,
): string[] | undefined {
  const parent = new Map<string, string | undefined>([[graph.root, undefined]]);
  const queue = [graph.root];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (next.includes(wanted)) {
      const chain = [];
      for (let at: string | undefined = next; at !== undefined; at = parent.get(at)) chain.unshift(at);
      return chain.map((specifier) => specifier.replace(/^file:\/\/.*?\/(discovery|agent|shared)\//, "$1/"));
    }
    const edges = graph.imports.get(next);
    for (const target of [...(edges?.static ?? []), ...(edges?.dynamic ?? []).filter(follows)]) {
      if (parent.has(target)) continue;
      parent.set(target, next);
      queue.push(target);
    }
  }
  return undefined;
}

/** Every import is followed but a dynamic one into `discovery/orch/`, made only when the orchestrator is read. */
const withoutOrchestrator = (target: string) => !/\/discovery\/orch\//.test(target);

Deno.test("mesh-discovery loads the orchestrator's client only through the imports that read the orchestrator", async () => {
  const graph = await moduleGraph("discovery/main.ts");
  assert.ok(pathTo(graph, ORCH_CLIENT, () => true), "reading the orchestrator still reaches its client");
  assert.equal(pathTo(graph, ORCH_CLIENT, withoutOrchestrator)?.join(" → "), undefined);
});

Deno.test("mesh-agent never loads the orchestrator's client", async () => {
  const graph = await moduleGraph("agent/main.ts");
  assert.equal(pathTo(graph, ORCH_CLIENT, () => true)?.join(" → "), undefined);
});
