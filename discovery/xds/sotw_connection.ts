/**
 * State-of-the-world ADS (`StreamAggregatedResources`) for one proxy.
 *
 * Per type: a request with `error_detail` is a NACK (counted, logged, nothing resent); a nonce that is not
 * the latest sent is stale (counted, ignored); an ACK records the version and is answered only when the
 * watched names changed; empty names unsubscribe from EDS, RDS and SDS but mean "everything" for CDS and LDS.
 *
 * @module
 */
import { frameDiscoveryResponse } from "@mesh/proto/discovery_frame";
import type { DiscoveryRequest } from "@mesh/proto/discovery_request";
import { shortTypeName } from "@mesh/proto/type_urls";
import { isForced, type PushRequest } from "../push/push_request.ts";
import type { PushSnapshot } from "../generate/generator.ts";
import { charsOf } from "./name_budget.ts";
import { anyFraming, type FramedResponse } from "./resource_runs.ts";
import type { VersionedResource } from "./versioned_resource.ts";
import { generateForConnection, XdsConnection, type XdsProtocol } from "./xds_connection.ts";
import { isWildcardType, pushOrder, resentAfter } from "./xds_types.ts";

/** The names a proxy watches for one type. */
interface Watch {
  readonly names: readonly string[];
}

/** A built response waiting to be sent. */
interface Prepared {
  readonly typeUrl: string;
  readonly bytes: Uint8Array;
  readonly version: string;
  readonly nonce: string;
  readonly resources: readonly VersionedResource[];
  readonly full: boolean;
  readonly names: readonly string[];
  readonly builtMs: number;
}

/** One proxy on a state-of-the-world ADS stream. */
export class SotwConnection<P extends PushSnapshot = PushSnapshot> extends XdsConnection<P> {
  /** Always `sotw`. */
  readonly protocol: XdsProtocol = "sotw";
  readonly #watches = new Map<string, Watch>();

  /** Watched names per type URL; `["*"]` for a wildcard watch. */
  watches(): Record<string, readonly string[]> {
    return Object.fromEntries(
      pushOrder(this.#watches.keys()).map((t) => {
        const names = this.#watches.get(t)!.names;
        return [t, names.length === 0 ? ["*"] : [...names]];
      }),
    );
  }

  /** Applies one DiscoveryRequest and answers it when the protocol calls for an answer. */
  async handleRequest(raw: unknown): Promise<void> {
    const request = raw as DiscoveryRequest;
    const typeUrl = request.type_url;
    if (typeUrl === "") {
      this.ctx.connectionLog.unanswered(this, "ignoring ADS request without type_url");
      return;
    }
    const nonce = request.response_nonce;
    const names = request.resource_names;
    const watch = this.#watches.get(typeUrl);
    const error = request.error_detail ?? undefined;
    const kind = this.acks.replyKind(typeUrl, nonce, error !== undefined);
    if (kind === "nack") {
      this.recordNack(typeUrl, nonce, error!);
      return;
    }
    if (watch === undefined || kind === "request") {
      // A new watch, or the proxy re-requesting after a reconnect: always answered.
      if (!this.#subscribe(typeUrl, names)) return;
      await this.#respond(typeUrl);
      return;
    }
    if (kind === "stale") {
      this.ctx.metrics.expiredNonce(typeUrl);
      this.ctx.logger.debug("ignoring ADS request with an expired nonce", {
        connection: this.id,
        type: shortTypeName(typeUrl),
        nonce,
      });
      return;
    }
    this.recordAck(typeUrl, nonce, request.version_info);
    if (sameNames(watch.names, names)) return;
    if (!this.#subscribe(typeUrl, names)) return;
    await this.#respond(typeUrl);
  }

  /**
   * Records a plain ACK (no error, the latest nonce of a watched type, the same names) at once, as
   * {@link handleRequest} would: an ACK then costs no queued work, closures or promises.
   */
  override acceptAck(raw: unknown): boolean {
    const request = raw as DiscoveryRequest;
    if (request.error_detail !== undefined && request.error_detail !== null) return false;
    const { type_url: typeUrl, response_nonce: nonce } = request;
    const watch = this.#watches.get(typeUrl);
    if (watch === undefined || nonce === "" || !this.isLatestNonce(typeUrl, nonce)) return false;
    if (!sameNames(watch.names, request.resource_names)) return false;
    this.recordAck(typeUrl, nonce, request.version_info);
    return true;
  }

  /** The watches by type URL. */
  protected watchedTypes(): ReadonlyMap<string, Watch> {
    return this.#watches;
  }

  /**
   * Sends `typeUrl` unless its generation equals what the proxy holds; a forced push, a type that must follow
   * one sent before it ({@link resentAfter}) and a type the proxy rejected are sent whatever they hold: a
   * route change sends RDS, not every cluster again.
   */
  protected async pushType(
    typeUrl: string,
    request: PushRequest,
    sentBefore: readonly string[],
  ): Promise<boolean> {
    const after = resentAfter(typeUrl);
    const skipUnchanged = request.full && !isForced(request) &&
      (after === undefined || !sentBefore.includes(after));
    const response = await this.#prepare(
      typeUrl,
      this.ctx.currentPush(),
      request.full,
      request.configsUpdated,
      skipUnchanged,
    );
    if (response === undefined) return false;
    await this.#sendPrepared(response);
    return true;
  }

  /**
   * Records the watch; false when empty names unsubscribe from a non-wildcard type.
   *
   * @throws {NameLimitError} when a name or the watch is over the stream's limits (nothing is recorded)
   */
  #subscribe(typeUrl: string, names: readonly string[]): boolean {
    const old = this.#watches.get(typeUrl);
    // A watch holds its type URL and its names.
    const held = old === undefined ? { names: 0, chars: 0 } : sizeOf(typeUrl, old.names);
    if (names.length === 0 && !isWildcardType(typeUrl)) {
      this.nameBudget.add(-held.names, -held.chars, typeUrl);
      this.#watches.delete(typeUrl);
      this.forgetType(typeUrl);
      return false;
    }
    this.nameBudget.checkName(typeUrl, "type URL", typeUrl);
    for (let i = 0; i < names.length; i++) this.nameBudget.checkName(names[i], "resource name", typeUrl);
    const size = sizeOf(typeUrl, names);
    this.nameBudget.add(size.names - held.names, size.chars - held.chars, typeUrl);
    this.#watches.set(typeUrl, { names: this.ctx.names.internAll(names) });
    return true;
  }

  /** Answers a request, through the same gate as pushes: a connect storm is throttled like a push. */
  async #respond(typeUrl: string): Promise<void> {
    await this.gated(async () => {
      if (this.closed) return;
      const response = await this.#prepare(typeUrl, this.ctx.currentPush(), true, undefined, false);
      if (response !== undefined) await this.#sendPrepared(response);
    });
  }

  /**
   * Builds the response of `typeUrl` (in the gate's slices); undefined when there is none to send. The watch
   * cannot change meanwhile: the connection's requests are serialised behind it.
   */
  async #prepare(
    typeUrl: string,
    push: P,
    full: boolean,
    configsUpdated: ReadonlySet<string> | undefined,
    skipUnchanged: boolean,
  ): Promise<Prepared | undefined> {
    const watch = this.#watches.get(typeUrl);
    if (watch === undefined) return undefined;
    const started = performance.now();
    const resources = await generateForConnection(
      this.ctx,
      this.id,
      this.proxy,
      typeUrl,
      push,
      configsUpdated === undefined
        ? { names: watch.names, full }
        : { names: watch.names, full, configsUpdated },
    );
    // The stream may have ended while the response was built.
    if (resources === "failed" || this.closed) return undefined;
    if (resources === undefined) {
      this.#warnNoGenerator(typeUrl);
      return undefined;
    }
    // An endpoint-only push that touches none of this proxy's clusters has nothing to say.
    if (!full && resources.length === 0) return undefined;
    const version = push.version;
    if (skipUnchanged && this.holdsSent(typeUrl, resources)) {
      this.recordUnchanged(typeUrl, version, {
        resources,
        ...(watch.names.length > 0 ? { keep: watch.names } : {}),
      });
      return undefined;
    }
    const nonceVersion = this.nonceVersionFor(version);
    const framed = anyFraming(resources);
    const frame = (): FramedResponse => {
      const nonce = this.ctx.nonces.make(nonceVersion);
      const bytes = frameDiscoveryResponse({
        version_info: version,
        resources: framed.inline ?? [],
        ...(framed.run === undefined ? {} : { resource_run: framed.run }),
        type_url: typeUrl,
        nonce,
        ...(this.ctx.controlPlane === undefined ? {} : { control_plane: this.ctx.controlPlane }),
      });
      return { bytes, nonce };
    };
    const { bytes, nonce } = framed.run === undefined ? frame() : this.ctx.lists.sharedResponse(
      resources,
      this.ctx.lists.inputsOf("sotw", typeUrl, version, nonceVersion, this.ctx.controlPlane),
      frame,
    );
    return {
      typeUrl,
      bytes,
      version,
      nonce,
      resources,
      full,
      names: watch.names,
      builtMs: performance.now() - started,
    };
  }

  /** Records the response as sent and sends it; the send's own promise, no async function's around it. */
  #sendPrepared(response: Prepared): Promise<void> {
    const { typeUrl } = response;
    // Recorded before the write so an ACK racing the write callback matches the latest nonce.
    const replace = response.full && isWildcardType(typeUrl);
    this.recordSent(
      typeUrl,
      response.version,
      response.nonce,
      response.resources,
      response.names.length > 0 ? { replace, keep: response.names } : { replace },
    );
    const sending = this.sendCounted(typeUrl, response.bytes, response.builtMs);
    if (!this.ctx.logger.debugEnabled) return sending;
    return sending.then(() =>
      this.ctx.logger.debug("sent ADS response", {
        connection: this.id,
        type: shortTypeName(typeUrl),
        resources: response.resources.length,
        bytes: response.bytes.length,
        nonce: response.nonce,
      })
    );
  }

  #warnNoGenerator(typeUrl: string): void {
    this.ctx.connectionLog.unanswered(
      this,
      "no generator for the requested type; the request is not answered",
      {
        type: typeUrl,
        generator: this.ctx.generators.flavorOf(this.proxy),
      },
    );
  }
}

/** What a watch of `names` holds against the stream's name budget: its type URL and its names. */
function sizeOf(typeUrl: string, names: readonly string[]): { names: number; chars: number } {
  return { names: 1 + names.length, chars: typeUrl.length + charsOf(names) };
}

/** Equal as sets: order and repeats of names carry no meaning. */
function sameNames(a: readonly string[], b: readonly string[]): boolean {
  // Requests that repeat a list arrive as the very list the watch holds (NameListTable).
  if (a === b) return true;
  // An ACK usually repeats the names in the same order: checked in one pass, without building sets.
  if (a.length === b.length && a.every((name, i) => name === b[i])) return true;
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...right].every((n) => left.has(n));
}
