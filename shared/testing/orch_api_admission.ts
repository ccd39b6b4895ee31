/**
 * Test support: what the test API server (`orch_api_server.ts`) serves for workloads joining the mesh beside
 * the registry kinds: ConfigMaps, the admission webhook configurations (stored like any object), and the
 * TokenReview API answering from a table of tokens the test issues. Only tests import this file.
 *
 * TokenReview follows the API server's audience rules closely enough for the CA: a review that names audiences
 * passes only a token bound to one of them; a review that names none passes a token bound to the API server's
 * own audience or a legacy token bound to none, and reports the API server's audience back.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** One resource type, as the test API server describes it. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** ConfigMaps and the webhook configurations. */
export const ADMISSION_TYPES: readonly ResourceType[] = Object.freeze([
  { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "MutatingWebhookConfiguration",
    plural: "mutatingwebhookconfigurations",
    namespaced: false,
  },
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    plural: "validatingwebhookconfigurations",
    namespaced: false,
  },
]);

/** The audience the API server's own tokens carry (and a review without audiences checks for). */
export const API_AUDIENCE = "kubernetes.default.svc";

/** The path TokenReviews are created at. */
const TOKEN_REVIEWS_PATH = "/apis/authentication.k8s.io/v1/tokenreviews";

/** What the table knows of an issued token. */
interface IssuedToken {
  readonly username: string;
  readonly groups: readonly string[];
  /** The audiences the token is bound to; undefined for a legacy (secret-based) token bound to none. */
  readonly audiences?: readonly string[];
}

/** One review the server answered: the audiences asked for and whether the token passed. */
export interface ReviewRecord {
  readonly audiences: readonly string[];
  readonly authenticated: boolean;
}

function base64Url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/** Tokens the test issued, and the TokenReview endpoint that judges them. */
export class TokenReviews {
  readonly #tokens = new Map<string, IssuedToken>();
  /** Every review answered, in order. */
  readonly reviews: ReviewRecord[] = [];

  /**
   * Issues a JWT-shaped token for service account `name` of `namespace`, bound to `audiences` (a projected
   * token), or to none when `audiences` is undefined (a legacy token). Its signature is random: only this
   * table can tell it is genuine, as only the API server can.
   */
  issue(namespace: string, name: string, audiences?: readonly string[]): string {
    const subject = `system:serviceaccount:${namespace}:${name}`;
    const token = [
      base64Url({ alg: "RS256", kid: "test" }),
      base64Url({
        iss: "https://orch.test",
        sub: subject,
        ...(audiences ? { aud: audiences, exp: Math.floor(Date.now() / 1000) + 3600 } : {}),
        "kubernetes.io": { namespace, serviceaccount: { name } },
      }),
      Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url"),
    ].join(".");
    this.#tokens.set(token, {
      username: subject,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
      ...(audiences ? { audiences } : {}),
    });
    return token;
  }

  /** Revokes a token: reviews of it fail from now on. */
  revoke(token: string): void {
    this.#tokens.delete(token);
  }

  /** The answer to a request when it is a TokenReview, else undefined. */
  handle(path: string, request: Request): Promise<Response> | undefined {
    if (path !== TOKEN_REVIEWS_PATH) return undefined;
    if (request.method !== "POST") {
      return Promise.resolve(Response.json({ kind: "Status", code: 405 }, { status: 405 }));
    }
    return this.#review(request);
  }

  async #review(request: Request): Promise<Response> {
    const body = await request.json() as { spec?: { token?: string; audiences?: string[] } };
    const asked = body.spec?.audiences ?? [];
    const issued = this.#tokens.get(body.spec?.token ?? "");
    const wanted = asked.length > 0 ? asked : [API_AUDIENCE];
    const bound = issued?.audiences ?? [API_AUDIENCE];
    const granted = wanted.filter((a) => bound.includes(a));
    const authenticated = issued !== undefined && granted.length > 0;
    this.reviews.push({ audiences: asked, authenticated });
    const status = authenticated
      ? {
        authenticated: true,
        user: { username: issued.username, uid: crypto.randomUUID(), groups: issued.groups },
        audiences: granted,
      }
      : {
        authenticated: false,
        error: issued === undefined
          ? "invalid bearer token"
          : "token audiences are invalid for the target audiences",
      };
    return Response.json(
      {
        kind: "TokenReview",
        apiVersion: "authentication.k8s.io/v1",
        metadata: { creationTimestamp: null },
        spec: body.spec ?? {},
        status,
      },
      { status: 201 },
    );
  }
}
