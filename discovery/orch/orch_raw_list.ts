/**
 * A list of an orchestrator path as the API serves it: plain JSON, not the typed client's deserialized objects.
 * The typed client's deserializer walks each item by its schema and throws on the first field of the wrong
 * shape (`spec.ports` as a map: "data is not iterable"), failing the whole list: one malformed object kept every
 * object of its kind from ever being listed, and the registry from ever reporting synced. Plain JSON is what the
 * watch delivers anyway; the registry checks each object's shape itself (`orch_shape_reader.ts`).
 *
 * @module
 */
import type * as k8s from "@kubernetes/client-node";
import { orchHttp } from "./orch_http.ts";

/**
 * How long one list may take: the API server's own default request timeout (`--request-timeout`, 1 min), so
 * a server that stops answering fails the list and its retry, rather than holding the informer.
 */
export const RAW_LIST_TIMEOUT_MS = 60_000;

/** A list call's failure with the API's HTTP status in `code`, as the typed client's errors carry it. */
export class OrchListError extends Error {
  /** `code` is the HTTP status the API server answered. */
  constructor(message: string, readonly code: number) {
    super(message);
    this.name = "OrchListError";
  }
}

/**
 * A list call for `path` (with an optional `query`, such as a label selector) returning the API's JSON list;
 * rejects with {@link OrchListError} on a status other than 2xx or a body that is not a list.
 */
export function rawList(kubeConfig: k8s.KubeConfig, path: string, query = ""): () => Promise<unknown> {
  const http = orchHttp(kubeConfig, RAW_LIST_TIMEOUT_MS);
  return async () => {
    const answer = await http({ method: "GET", path: query === "" ? path : `${path}?${query}` });
    if (answer.status < 200 || answer.status > 299) {
      const message = (answer.body as { message?: unknown } | undefined)?.message;
      throw new OrchListError(
        `GET ${path}: the API server answered ${answer.status}${
          typeof message === "string" ? `: ${message.slice(0, 200)}` : ""
        }`,
        answer.status,
      );
    }
    const body = answer.body as { items?: unknown; metadata?: unknown } | undefined;
    if (body === undefined || body === null || !Array.isArray(body.items)) {
      throw new OrchListError(`GET ${path}: expected a list with an items array`, answer.status);
    }
    // Items of the wrong shape are the registry's to judge one by one; a non-object item has no metadata.
    return { ...body, items: body.items.filter((i) => i !== null && typeof i === "object") };
  };
}
