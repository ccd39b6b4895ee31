/**
 * Test support: what the test API server adds for leader election. It serves `coordination.k8s.io/v1` Leases,
 * refuses a replace or a delete naming a `resourceVersion` it no longer holds with 409 Conflict (as a real API
 * server does for every kind), and keeps a ledger of writes: who wrote (the bearer token, one per replica in a test), what,
 * and who held each Lease at that moment, so a test can check that a duty's writes came from its leader only
 * and that a Lease never changed hands while its holder's term was running. Only tests import this file.
 *
 * @module
 */

/** The Lease resource type. */
export const LEASE_TYPE = Object.freeze({
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
});

/** One write the server accepted. */
export interface LedgerWrite {
  /** The bearer token of the request; empty when none. */
  readonly by: string;
  readonly method: string;
  readonly path: string;
  /** When the server accepted it, on its wall clock (ms). */
  readonly at: number;
  /** Lease name → its holder when the write was made (empty when released). */
  readonly leaseHolders: Readonly<Record<string, string>>;
}

type Spec = { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
type Stored = { metadata: { name: string; resourceVersion?: string }; spec?: unknown };

/** The 409 a real API server answers a replace naming a version it no longer holds; undefined when current. */
export function staleWrite(current: Stored | undefined, body: Stored): Response | undefined {
  const named = body.metadata?.resourceVersion;
  if (current === undefined || named === undefined || named === "") return undefined;
  if (named === current.metadata.resourceVersion) return undefined;
  const message = `Operation cannot be fulfilled on "${body.metadata.name}": the object has been modified; ` +
    "please apply your changes to the latest version and try again";
  return Response.json(
    {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason: "Conflict",
      code: 409,
    },
    { status: 409 },
  );
}

/**
 * A delete's `preconditions.resourceVersion` in the shape `staleWrite` checks (a delete without one applies to
 * any version).
 */
export async function deleteOptions(request: Request): Promise<Stored> {
  const text = await request.text();
  const options = text === "" ? {} : JSON.parse(text) as { preconditions?: { resourceVersion?: string } };
  const version = options.preconditions?.resourceVersion;
  return {
    metadata: { name: new URL(request.url).pathname.split("/").at(-1) ?? "", resourceVersion: version },
  };
}

/** Writes by requester, and takeovers of Leases whose holder's term had not ended. */
export class LeaseLedger {
  /** Every accepted write, in order. */
  readonly writes: LedgerWrite[] = [];
  /** Lease changes that gave it to a new holder while the previous one's term was running. */
  readonly overlaps: string[] = [];
  /** Lease name → its current spec. */
  readonly #leases = new Map<string, Spec>();
  readonly #now: () => number;

  /** `now` is the server's wall clock, in milliseconds. */
  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  /** Records an accepted write; `lease` is the Lease written, when it is one. */
  record(request: Request, path: string, lease?: Stored): void {
    if (lease !== undefined) this.#leaseWritten(lease);
    const auth = request.headers.get("authorization") ?? "";
    this.writes.push({
      by: auth.startsWith("Bearer ") ? auth.slice("Bearer ".length) : "",
      method: request.method,
      path,
      at: this.#now(),
      leaseHolders: Object.fromEntries(
        [...this.#leases].map(([name, spec]) => [name, spec.holderIdentity ?? ""]),
      ),
    });
  }

  /** How many writes `by` made (`by` is a bearer token). */
  writesBy(by: string): number {
    return this.writes.filter((w) => w.by === by).length;
  }

  #leaseWritten(lease: Stored): void {
    const spec = (lease.spec ?? {}) as Spec;
    const name = lease.metadata.name;
    const previous = this.#leases.get(name);
    const before = previous?.holderIdentity ?? "";
    const after = spec.holderIdentity ?? "";
    if (previous !== undefined && before !== "" && after !== "" && before !== after) {
      const ends = Date.parse(previous.renewTime ?? "") + (previous.leaseDurationSeconds ?? 0) * 1000;
      if (this.#now() < ends) {
        this.overlaps.push(
          `${name}: "${after}" took it from "${before}" ${ends - this.#now()} ms before it expired`,
        );
      }
    }
    this.#leases.set(name, spec);
  }
}
