/**
 * Plain requests to the orchestrator's API with the client's credentials and a bounded time: what the typed
 * client cannot give, a deadline on each call, so a hanging API server slows its caller and never holds it.
 *
 * @module
 */
import type * as k8s from "@kubernetes/client-node";
import fetch, { type RequestInit } from "node-fetch";

/** An answer of the API server: its HTTP status and its JSON body (undefined when it sent none). */
export interface OrchHttpResponse {
  readonly status: number;
  readonly body: unknown;
}

/** One request: method, path below the server (`/apis/…`), optional JSON body and its content type. */
export interface OrchHttpRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  readonly path: string;
  readonly body?: unknown;
  /** Default `application/json`; a merge patch names `application/merge-patch+json`. */
  readonly contentType?: string;
}

/** Sends a request; rejects with {@link OrchHttpError} when no answer came in time or the call failed. */
export type OrchHttp = (request: OrchHttpRequest) => Promise<OrchHttpResponse>;

/** A request that got no answer: the server did not answer in time, or could not be reached. */
export class OrchHttpError extends Error {
  /** `timedOut` is true when the deadline passed. */
  constructor(message: string, readonly timedOut: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = "OrchHttpError";
  }
}

/** Requests through `kubeConfig`'s current cluster and user, each ended after `timeoutMs`. */
export function orchHttp(kubeConfig: k8s.KubeConfig, timeoutMs: number): OrchHttp {
  return async (request) => {
    const server = kubeConfig.getCurrentCluster()?.server ?? "";
    const url = server.replace(/\/+$/, "") + request.path;
    const options = await kubeConfig.applyToFetchOptions({}) as RequestInit;
    const headers = options.headers as unknown as { set(name: string, value: string): void };
    headers.set("accept", "application/json");
    if (request.body !== undefined) headers.set("content-type", request.contentType ?? "application/json");
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetch(url, {
        ...options,
        method: request.method,
        ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
        signal: signal as RequestInit["signal"],
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, body };
    } catch (cause) {
      const timedOut = signal.aborted;
      throw new OrchHttpError(
        timedOut
          ? `${request.method} ${request.path}: the orchestrator's API did not answer within ${timeoutMs} ms`
          : `${request.method} ${request.path}: ${(cause as Error).message}`,
        timedOut,
        { cause },
      );
    }
  };
}
