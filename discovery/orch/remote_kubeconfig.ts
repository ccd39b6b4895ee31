/**
 * A remote cluster's kubeconfig, from a Secret anyone who may write Secrets in the mesh's namespace sets, read
 * as data only: its size and nesting are bounded before it is parsed, the current context's cluster, user and
 * context are checked field by field, and only those three are kept. A kubeconfig that names local files
 * (`token-file`, `certificate-authority`, `client-certificate`, `client-key`) or commands (`exec`,
 * `auth-provider`) is refused: the client would read the file or run the command on the control plane's host
 * and send what it got to the kubeconfig's server, whichever server that names.
 *
 * @module
 */
import * as k8s from "@kubernetes/client-node";
import { load } from "js-yaml";
import { type Fields, ShapeReader } from "./orch_shape_reader.ts";

/** The largest kubeconfig read: a Secret holds at most 1 MiB in all. */
export const MAX_KUBECONFIG_BYTES = 1 << 20;

/** Nesting beyond a kubeconfig's own (a handful of levels) is refused while parsing, not by a stack overflow. */
const MAX_DEPTH = 20;

/** Fields that make the client read a file or run a command on this host. */
const LOCAL_FIELDS = {
  cluster: ["certificate-authority"],
  user: ["token-file", "client-certificate", "client-key", "exec", "auth-provider"],
} as const;

/** A usable kubeconfig: the client and the server it names; or why it is not one. */
export type RemoteKubeconfig =
  | { readonly kubeConfig: k8s.KubeConfig; readonly server: string; readonly error?: undefined }
  | { readonly error: string };

/** The entry of `list` named `name`, or undefined. */
function named(
  r: ShapeReader,
  list: unknown,
  path: string,
  name: string,
): { item: Fields; at: string } | undefined {
  return r.objects(list, path).find(({ item }) => item.name === name);
}

/** Parses `text` as a remote cluster's kubeconfig; never throws. */
export function parseRemoteKubeconfig(text: string): RemoteKubeconfig {
  if (text.length > MAX_KUBECONFIG_BYTES) {
    return { error: `it is ${text.length} bytes; expected at most ${MAX_KUBECONFIG_BYTES}` };
  }
  let doc: unknown;
  try {
    doc = load(text, { maxDepth: MAX_DEPTH } as Parameters<typeof load>[1]);
  } catch (error) {
    return { error: `it is not YAML: ${String((error as Error).message).split("\n")[0].slice(0, 120)}` };
  }
  const r = new ShapeReader();
  const fail = (what: string) => ({ error: [what, ...r.problems].join("; ").slice(0, 600) });
  const root = r.fields(doc, "(document)");
  if (root === undefined) return fail("expected a YAML mapping");
  const current = r.string(root["current-context"], "current-context");
  if (current === undefined || current === "") return fail('expected a "current-context"');
  const context = named(r, root.contexts, "contexts", current);
  if (context === undefined) return fail(`expected a context named ${JSON.stringify(current.slice(0, 60))}`);
  const ctx = r.fields(context.item.context, `${context.at}.context`);
  const clusterName = r.string(ctx?.cluster, `${context.at}.context.cluster`);
  const userName = r.string(ctx?.user, `${context.at}.context.user`);
  if (clusterName === undefined) return fail("expected the current context to name a cluster");
  const cluster = named(r, root.clusters, "clusters", clusterName);
  const c = cluster && r.fields(cluster.item.cluster, `${cluster.at}.cluster`);
  if (cluster === undefined || c === undefined) {
    return fail(`expected a cluster named ${JSON.stringify(clusterName.slice(0, 60))}`);
  }
  const server = r.string(c.server, `${cluster.at}.cluster.server`);
  let url: URL | undefined;
  try {
    url = server === undefined ? undefined : new URL(server);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    return fail(`expected ${cluster.at}.cluster.server to be an http(s) URL`);
  }
  const user = userName === undefined ? undefined : named(r, root.users, "users", userName);
  if (userName !== undefined && user === undefined) {
    return fail(`expected a user named ${JSON.stringify(userName.slice(0, 60))}`);
  }
  const u = user && (r.fields(user.item.user, `${user.at}.user`) ?? {});
  const local = [
    ...LOCAL_FIELDS.cluster.filter((f) => c[f] !== undefined && c[f] !== null).map((f) =>
      `${cluster.at}.cluster.${f}`
    ),
    ...LOCAL_FIELDS.user.filter((f) => u?.[f] !== undefined && u?.[f] !== null).map((f) =>
      `${user!.at}.user.${f}`
    ),
  ];
  if (local.length > 0) {
    return fail(`${local.join(", ")}: expected inline data only, not files or commands of this host`);
  }
  const strings = (fields: Fields | undefined, at: string, names: readonly string[]) =>
    Object.fromEntries(names.map((n) => [n, r.string(fields?.[n], `${at}.${n}`)]));
  const cs = strings(c, `${cluster.at}.cluster`, [
    "certificate-authority-data",
    "tls-server-name",
    "proxy-url",
  ]);
  const skipTLSVerify = r.boolean(
    c["insecure-skip-tls-verify"],
    `${cluster.at}.cluster.insecure-skip-tls-verify`,
  );
  const us = strings(u, `${user?.at}.user`, [
    "token",
    "client-certificate-data",
    "client-key-data",
    "username",
    "password",
  ]);
  // A field of the wrong type would be left out silently and change how the client connects: refused instead.
  if (r.problems.length > 0) return fail("expected each field the client reads to be a string");
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{
      name: clusterName,
      server: server!.replace(/\/$/, ""),
      skipTLSVerify: skipTLSVerify === true,
      ...(cs["certificate-authority-data"] !== undefined && { caData: cs["certificate-authority-data"] }),
      ...(cs["tls-server-name"] !== undefined && { tlsServerName: cs["tls-server-name"] }),
      ...(cs["proxy-url"] !== undefined && { proxyUrl: cs["proxy-url"] }),
    }],
    users: [{
      name: userName ?? "",
      ...(us.token !== undefined && { token: us.token }),
      ...(us["client-certificate-data"] !== undefined && { certData: us["client-certificate-data"] }),
      ...(us["client-key-data"] !== undefined && { keyData: us["client-key-data"] }),
      ...(us.username !== undefined && { username: us.username }),
      ...(us.password !== undefined && { password: us.password }),
    }],
    contexts: [{ name: current, cluster: clusterName, user: userName ?? "" }],
    currentContext: current,
  });
  return { kubeConfig, server: server! };
}
