/**
 * Test support: a small in-process orchestrator API server speaking the real protocol for the kinds the mesh
 * reads (Services, Endpoints, Pods, Nodes, Namespaces, Secrets, and the mesh's custom resources under their own
 * and Istio's group names) and writes (ConfigMaps, webhook configurations; `orch_api_admission.ts`, which also
 * answers TokenReviews; a write through the API passes mutating then validating admission,
 * `orch_api_mutating_admission.ts` and `orch_api_validating_admission.ts`): discovery documents, list with `resourceVersion`, watch streams of JSON lines
 * (ADDED, MODIFIED, DELETED, BOOKMARK, and ERROR 410 for a version older than the kept history), create,
 * replace, merge patch and delete; ConfigMaps, CertificateSigningRequests and the `status` and `approval`
 * subresources as `orch_api_subresources.ts` says. Faithful enough for `kubectl get/apply/delete` and for
 * `@kubernetes/client-node` informers. Tests change objects through it and can expire the history or drop every
 * open watch to exercise relists and reconnects. Only tests import this file. Analysis' Deployments and custom
 * resource definitions are in `orch_api_workload_kinds.ts`.
 *
 * A server may start without some API groups (`absentGroups`: as a cluster where those custom resource
 * definitions are not installed, every path of theirs is 404) and `install` them later.
 *
 * Not modelled: authentication (any bearer token passes), label and field selectors, pagination (`limit` is
 * ignored: everything is one page), strategic-merge directives (a strategic patch is applied as a JSON merge
 * patch without its `$` directives, which is what it is for maps and whole-list replacements). A patch that
 * changes nothing stores nothing, as on a real server.
 *
 * @module
 */
import { KINDS } from "../config/kinds.ts";
import { deleteOptions, LEASE_TYPE, LeaseLedger, staleWrite } from "./orch_api_leases.ts";
import { SUBRESOURCE_KINDS, subresourceWrite, WriteRefused } from "./orch_api_subresources.ts";
import { ADMISSION_TYPES, type ResourceType, TokenReviews } from "./orch_api_admission.ts";
import { ValidatingAdmission } from "./orch_api_validating_admission.ts";
import { MutatingAdmission } from "./orch_api_mutating_admission.ts";
import { WORKLOAD_TYPES } from "./orch_api_workload_kinds.ts";

/** A stored object: plain JSON with `metadata`. */
export type ApiObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
};

interface WatchEvent {
  readonly rv: number;
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly typeKey: string;
  readonly object: ApiObject;
}

interface Watcher {
  readonly typeKey: string;
  readonly namespace?: string;
  /** Whether the client asked for BOOKMARK events. */
  readonly bookmarks: boolean;
  readonly send: (line: string) => void;
  readonly close: () => void;
}

const CORE: readonly ResourceType[] = [
  { group: "", version: "v1", kind: "Service", plural: "services", namespaced: true },
  { group: "", version: "v1", kind: "Endpoints", plural: "endpoints", namespaced: true },
  { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true },
  { group: "", version: "v1", kind: "Node", plural: "nodes", namespaced: false },
  { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
  { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  {
    group: "discovery.k8s.io",
    version: "v1",
    kind: "EndpointSlice",
    plural: "endpointslices",
    namespaced: true,
  },
  { group: "networking.k8s.io", version: "v1", kind: "Ingress", plural: "ingresses", namespaced: true },
  {
    group: "networking.k8s.io",
    version: "v1",
    kind: "IngressClass",
    plural: "ingressclasses",
    namespaced: false,
  },
];

/** The mesh kinds, in every version, under their own and Istio's group names. */
function meshTypes(): ResourceType[] {
  const out: ResourceType[] = [];
  for (const info of KINDS) {
    const istio = info.group.replace(".mesh.io", ".istio.io");
    for (const group of [info.group, istio]) {
      for (const version of info.versions) {
        out.push({ group, version, kind: info.kind, plural: info.plural, namespaced: true });
      }
    }
  }
  return out;
}

function groupVersion(t: ResourceType): string {
  return t.group === "" ? t.version : `${t.group}/${t.version}`;
}

/** Objects of one kind are shared by every version of it, as custom resources are; each group is its own. */
function storeKey(t: ResourceType): string {
  return t.group === "" ? t.plural : `${t.group}/${t.plural}`;
}

function status(code: number, reason: string, message: string): Response {
  return Response.json(
    { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code },
    { status: code },
  );
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === "object" && !Array.isArray(target)
    ? { ...(target as Record<string, unknown>) }
    : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    // A strategic patch's directives (`$setElementOrder/…`, `$patch`, `$retainKeys`) are not fields.
    if (key.startsWith("$")) continue;
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** A kubeconfig (YAML) for a plain-HTTP API server at `server` (an unreachable one too, to test failures). */
export function kubeconfigFor(server: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${server}`,
    // Plain HTTP on loopback: clients refuse it unless told that no TLS check is wanted.
    "    insecure-skip-tls-verify: true",
    "users:",
    "- name: test",
    "  user:",
    "    token: test-token",
    "contexts:",
    "- name: test",
    "  context:",
    "    cluster: test",
    "    user: test",
    "current-context: test",
    "",
  ].join("\n");
}

/** The in-process API server. */
export class OrchApiServer {
  readonly #types: readonly ResourceType[] = [
    ...CORE,
    LEASE_TYPE,
    ...SUBRESOURCE_KINDS,
    ...ADMISSION_TYPES,
    ...WORKLOAD_TYPES,
    ...meshTypes(),
  ];
  /** Every accepted write, by requester, with the Lease holders of the moment (`orch_api_leases.ts`). */
  readonly ledger: LeaseLedger;
  /** The TokenReview API: tokens the test issues through it are reviewed as the API server would. */
  readonly tokenReviews: TokenReviews = new TokenReviews();
  /** Validating admission of writes made through the API (not of `apply`), `?dryRun=All` included. */
  readonly validating: ValidatingAdmission = new ValidatingAdmission();
  /** Mutating admission of the same writes, before validation; its webhooks' services are the validating's. */
  readonly mutating: MutatingAdmission = new MutatingAdmission(this.validating.caller);
  /** storeKey → `namespace/name` → object */
  readonly #objects = new Map<string, Map<string, ApiObject>>();
  #events: WatchEvent[] = [];
  /** Versions at or below this have been compacted away: watching from them is 410 Gone. */
  #compactedThrough = 0;
  #rv = 1;
  readonly #watchers = new Set<Watcher>();
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #bookmarkTimer: ReturnType<typeof setInterval>;
  /** Requests served, as `METHOD path?query`, for tests that check what a client asked. */
  readonly requests: string[] = [];
  /** API groups not installed: everything under them is 404. */
  readonly #absentGroups: Set<string>;
  /** Answers a request before the server does when it returns a response (a test's 500s or hangs). */
  intercept?: (request: Request, path: string) => Response | undefined | Promise<Response | undefined>;

  private constructor(bookmarkMs: number, absentGroups: readonly string[], wallClock?: () => number) {
    this.#absentGroups = new Set(absentGroups);
    this.ledger = new LeaseLedger(wallClock);
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (request) => this.#handle(request),
    );
    this.#bookmarkTimer = setInterval(() => this.#bookmarks(), bookmarkMs);
  }

  /**
   * Starts a server on a free loopback port; bookmarks go to watchers that allow them every `bookmarkMs`;
   * `absentGroups` are not served until installed; `wallClock` (ms) tells when a Lease's term ends.
   */
  static start(
    options: { bookmarkMs?: number; absentGroups?: readonly string[]; wallClock?: () => number } = {},
  ): OrchApiServer {
    return new OrchApiServer(options.bookmarkMs ?? 1_000, options.absentGroups ?? [], options.wallClock);
  }

  /** Starts serving an API group it was started without, as installing its definitions does. */
  install(group: string): void {
    this.#absentGroups.delete(group);
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** The current resource version. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** A kubeconfig (YAML) that points at this server with a bearer token. */
  kubeconfig(): string {
    return kubeconfigFor(this.url);
  }

  /**
   * Creates or replaces an object (by its apiVersion, kind, namespace and name), or only its `subresource`
   * (`status`, `approval`); returns the stored copy.
   */
  apply(object: ApiObject, subresource?: string): ApiObject {
    const type = this.#typeOf(String(object.apiVersion), String(object.kind));
    return this.#put(type, object, subresource);
  }

  /** Deletes an object; false when there was none. */
  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): boolean {
    return this.#remove(this.#typeOf(apiVersion, kind), namespace, name) !== undefined;
  }

  /** Forgets the event history: a watch from any version before now gets 410 Gone and must relist. */
  compact(): void {
    this.#compactedThrough = this.#rv;
    this.#events = [];
  }

  /** Ends every open watch stream, as a restarting API server or a dropped connection would. */
  dropWatches(): void {
    for (const watcher of [...this.#watchers]) watcher.close();
  }

  /** Open watch streams. */
  get watchCount(): number {
    return this.#watchers.size;
  }

  /** Stops the server and ends every watch. */
  async close(): Promise<void> {
    clearInterval(this.#bookmarkTimer);
    this.dropWatches();
    await this.#server.shutdown();
  }

  #typeOf(apiVersion: string, kind: string): ResourceType {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    const type = this.#served().find((t) => t.group === group && t.version === version && t.kind === kind);
    if (type === undefined) throw new TypeError(`The test API server does not serve ${apiVersion} ${kind}`);
    return type;
  }

  /** The resource types of the installed groups. */
  #served(): ResourceType[] {
    return this.#types.filter((t) => !this.#absentGroups.has(t.group));
  }

  #bucket(type: ResourceType): Map<string, ApiObject> {
    const key = storeKey(type);
    let bucket = this.#objects.get(key);
    if (bucket === undefined) this.#objects.set(key, bucket = new Map());
    return bucket;
  }

  #put(type: ResourceType, sent: ApiObject, subresource?: string): ApiObject {
    const namespace = type.namespaced ? (sent.metadata.namespace ?? "default") : undefined;
    const id = `${namespace ?? ""}/${sent.metadata.name}`;
    const bucket = this.#bucket(type);
    const previous = bucket.get(id);
    const input = subresourceWrite(type, previous, sent, subresource) as ApiObject;
    const rv = ++this.#rv;
    // A JSON copy, not a structured clone: the real API server stores objects nested up to 10,000 levels,
    // and the runtime's structured clone gives up between 2,000 and 3,000.
    const stored: ApiObject = {
      ...JSON.parse(JSON.stringify(input)),
      apiVersion: groupVersion(type),
      kind: type.kind,
      metadata: {
        ...structuredClone(input.metadata),
        ...(namespace !== undefined ? { namespace } : {}),
        resourceVersion: String(rv),
        uid: (previous?.metadata.uid as string | undefined) ?? crypto.randomUUID(),
        creationTimestamp: (previous?.metadata.creationTimestamp as string | undefined) ??
          new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      },
    };
    bucket.set(id, stored);
    this.#emit({ rv, type: previous ? "MODIFIED" : "ADDED", typeKey: storeKey(type), object: stored });
    return stored;
  }

  #remove(type: ResourceType, namespace: string | undefined, name: string): ApiObject | undefined {
    const bucket = this.#bucket(type);
    const id = `${type.namespaced ? (namespace ?? "default") : ""}/${name}`;
    const previous = bucket.get(id);
    if (previous === undefined) return undefined;
    bucket.delete(id);
    const rv = ++this.#rv;
    const gone = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rv) } };
    this.#emit({ rv, type: "DELETED", typeKey: storeKey(type), object: gone });
    return gone;
  }

  #emit(event: WatchEvent): void {
    this.#events.push(event);
    for (const watcher of this.#watchers) {
      if (watcher.typeKey !== event.typeKey) continue;
      if (watcher.namespace !== undefined && event.object.metadata.namespace !== watcher.namespace) continue;
      watcher.send(JSON.stringify({ type: event.type, object: event.object }));
    }
  }

  #bookmarks(): void {
    for (const watcher of this.#watchers) {
      if (!watcher.bookmarks) continue;
      watcher.send(
        JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: this.resourceVersion } } }),
      );
    }
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.requests.push(`${request.method} ${url.pathname}${url.search}`);
    const path = url.pathname.replace(/\/+$/, "");
    const intercepted = await this.intercept?.(request, path);
    if (intercepted !== undefined) return intercepted;
    if (path === "/version") {
      return Response.json({ major: "1", minor: "29", gitVersion: "v1.29.0", platform: "linux/amd64" });
    }
    if (path === "/api") {
      return Response.json({
        kind: "APIVersions",
        versions: ["v1"],
        serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: url.host }],
      });
    }
    if (path === "/apis") return Response.json(this.#groupList());
    const review = this.tokenReviews.handle(path, request);
    if (review !== undefined) return await review;
    const discovery = path.match(/^\/api\/v1$|^\/apis\/([^/]+)\/([^/]+)$/);
    if (discovery !== null) {
      const gv = discovery[1] === undefined ? "v1" : `${discovery[1]}/${discovery[2]}`;
      const resources = this.#served().filter((t) => groupVersion(t) === gv);
      if (resources.length === 0) return status(404, "NotFound", `the server could not find ${gv}`);
      return Response.json({
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: gv,
        resources: resources.map((t) => ({
          name: t.plural,
          singularName: t.kind.toLowerCase(),
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
        })),
      });
    }
    const route = this.#route(path);
    if (route === undefined) {
      return status(404, "NotFound", `the server could not find the requested resource ${path}`);
    }
    const response = await this.#serve(request, url, route);
    if (request.method !== "GET" && response.ok) {
      this.ledger.record(
        request,
        path,
        route.type === LEASE_TYPE ? await response.clone().json() : undefined,
      );
    }
    return response;
  }

  async #serve(
    request: Request,
    url: URL,
    { type, namespace, name, subresource }: {
      type: ResourceType;
      namespace?: string;
      name?: string;
      subresource?: string;
    },
  ): Promise<Response> {
    try {
      switch (request.method) {
        case "GET":
          if (name !== undefined) return this.#get(type, namespace, name);
          return url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1"
            ? this.#watch(type, namespace, url.searchParams)
            : this.#list(type, namespace);
        case "POST": {
          const body = await request.json() as ApiObject;
          const ns = type.namespaced ? (namespace ?? body.metadata?.namespace ?? "default") : undefined;
          if (this.#bucket(type).has(`${ns ?? ""}/${body.metadata?.name}`)) {
            return status(409, "AlreadyExists", `${type.plural} "${body.metadata?.name}" already exists`);
          }
          const created = { ...body, metadata: { ...body.metadata, namespace: ns } } as ApiObject;
          const admitted = await this.#admit(type, "CREATE", created, url);
          return admitted instanceof Response
            ? admitted
            : Response.json(this.#put(type, admitted), { status: 201 });
        }
        case "PUT": {
          const body = await request.json() as ApiObject;
          const current = this.#bucket(type).get(`${type.namespaced ? namespace ?? "default" : ""}/${name}`);
          const conflict = staleWrite(current, body);
          if (conflict !== undefined) return conflict;
          const replaced = { ...body, metadata: { ...body.metadata, namespace, name: name! } };
          // Admission sees writes of objects, not of their status.
          const admitted = subresource === undefined
            ? await this.#admit(type, "UPDATE", replaced, url)
            : replaced;
          return admitted instanceof Response
            ? admitted
            : Response.json(this.#put(type, admitted, subresource));
        }
        case "PATCH": {
          const current = this.#bucket(type).get(`${type.namespaced ? namespace ?? "default" : ""}/${name}`);
          if (current === undefined) return status(404, "NotFound", `${type.plural} "${name}" not found`);
          const patched = mergePatch(current, await request.json()) as ApiObject;
          const admitted = subresource === undefined
            ? await this.#admit(type, "UPDATE", patched, url)
            : patched;
          if (admitted instanceof Response) return admitted;
          // As a real API server: no new version and no event for a patch that changes nothing.
          if (JSON.stringify(admitted) === JSON.stringify(current)) return Response.json(current);
          return Response.json(this.#put(type, admitted, subresource));
        }
        case "DELETE": {
          const current = this.#bucket(type).get(`${type.namespaced ? namespace ?? "default" : ""}/${name}`);
          const conflict = staleWrite(current, await deleteOptions(request));
          if (conflict !== undefined) return conflict;
          const gone = this.#remove(type, namespace, name ?? "");
          return gone === undefined
            ? status(404, "NotFound", `${type.plural} "${name}" not found`)
            : Response.json(gone);
        }
        default:
          return status(405, "MethodNotAllowed", `${request.method} is not supported`);
      }
    } catch (error) {
      if (error instanceof WriteRefused) return status(error.code, error.reason, error.message);
      return status(400, "BadRequest", error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * Admission of an API write, mutating then validating: the object to store, its refusal, or a `dryRun=All`
   * write's unstored answer.
   */
  async #admit(
    type: ResourceType,
    operation: "CREATE" | "UPDATE",
    object: ApiObject,
    url: URL,
  ): Promise<ApiObject | Response> {
    const old = this.#bucket(type).get(`${object.metadata.namespace ?? ""}/${object.metadata.name}`);
    const namespace = type.kind === "Namespace" ? object : this.#objects.get("namespaces")?.get(
      `/${object.metadata.namespace}`,
    );
    const write = {
      type,
      operation,
      object,
      old,
      namespaceLabels: (namespace?.metadata.labels ?? {}) as Record<string, string>,
    };
    const stored = (plural: string) => [
      ...this.#objects.get(`admissionregistration.k8s.io/${plural}`)?.values() ?? [],
    ];
    const mutated = await this.mutating.admit(stored("mutatingwebhookconfigurations"), write, url);
    if (mutated instanceof Response) return mutated;
    return await this.validating.admit(stored("validatingwebhookconfigurations"), {
      ...write,
      object: mutated,
    }, url) ??
      mutated as ApiObject;
  }

  #groupList(): Record<string, unknown> {
    const groups = new Map<string, string[]>();
    for (const t of this.#served()) {
      if (t.group === "") continue;
      const versions = groups.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      groups.set(t.group, versions);
    }
    return {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [...groups].map(([name, versions]) => ({
        name,
        versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
        preferredVersion: { groupVersion: `${name}/${versions.at(-1)}`, version: versions.at(-1) },
      })),
    };
  }

  #route(
    path: string,
  ): { type: ResourceType; namespace?: string; name?: string; subresource?: string } | undefined {
    const parts = path.split("/").filter((p) => p !== "");
    let gv: string;
    let rest: string[];
    if (parts[0] === "api" && parts[1] === "v1") {
      gv = "v1";
      rest = parts.slice(2);
    } else if (parts[0] === "apis" && parts.length >= 3) {
      gv = `${parts[1]}/${parts[2]}`;
      rest = parts.slice(3);
    } else return undefined;
    let namespace: string | undefined;
    // `namespaces/<ns>/<plural>…` scopes to a namespace; `namespaces/<name>` alone is a Namespace object.
    if (rest[0] === "namespaces" && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const type = this.#served().find((t) => groupVersion(t) === gv && t.plural === rest[0]);
    if (type === undefined || rest.length > 3) return undefined;
    return {
      type,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(rest[1] !== undefined ? { name: rest[1] } : {}),
      ...(rest[2] !== undefined ? { subresource: rest[2] } : {}),
    };
  }

  #items(type: ResourceType, namespace: string | undefined): ApiObject[] {
    return [...this.#bucket(type).values()]
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .map((o) => ({ ...o, apiVersion: groupVersion(type) }));
  }

  #get(type: ResourceType, namespace: string | undefined, name: string): Response {
    const found = this.#bucket(type).get(`${type.namespaced ? namespace ?? "default" : ""}/${name}`);
    return found === undefined
      ? status(404, "NotFound", `${type.plural} "${name}" not found`)
      : Response.json({ ...found, apiVersion: groupVersion(type) });
  }

  #list(type: ResourceType, namespace: string | undefined): Response {
    return Response.json({
      kind: `${type.kind}List`,
      apiVersion: groupVersion(type),
      metadata: { resourceVersion: this.resourceVersion },
      items: this.#items(type, namespace),
    });
  }

  #watch(type: ResourceType, namespace: string | undefined, params: URLSearchParams): Response {
    const from = params.get("resourceVersion");
    const encoder = new TextEncoder();
    const typeKey = storeKey(type);
    let watcher: Watcher;
    const timeout = Number(params.get("timeoutSeconds") ?? "0");
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        let open = true;
        const send = (line: string) => {
          if (open) controller.enqueue(encoder.encode(line + "\n"));
        };
        const close = () => {
          if (!open) return;
          open = false;
          this.#watchers.delete(watcher);
          clearTimeout(timer);
          controller.close();
        };
        const timer = timeout > 0 ? setTimeout(close, timeout * 1000) : undefined;
        watcher = {
          typeKey,
          ...(namespace !== undefined ? { namespace } : {}),
          send,
          close,
          bookmarks: params.get("allowWatchBookmarks") === "true",
        };
        if (from === null || from === "" || from === "0") {
          for (const object of this.#items(type, namespace)) send(JSON.stringify({ type: "ADDED", object }));
        } else if (Number(from) < this.#compactedThrough) {
          send(JSON.stringify({
            type: "ERROR",
            object: {
              kind: "Status",
              apiVersion: "v1",
              status: "Failure",
              reason: "Expired",
              code: 410,
              message: `too old resource version: ${from} (${this.#compactedThrough})`,
            },
          }));
          close();
          return;
        } else {
          for (const event of this.#events) {
            if (event.rv <= Number(from) || event.typeKey !== typeKey) continue;
            if (namespace !== undefined && event.object.metadata.namespace !== namespace) continue;
            send(JSON.stringify({ type: event.type, object: event.object }));
          }
        }
        this.#watchers.add(watcher);
      },
      cancel: () => {
        this.#watchers.delete(watcher);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  }
}
