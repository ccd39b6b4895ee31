/**
 * Incremental ADS (`DeltaAggregatedResources`) for one proxy.
 *
 * Per type the server keeps the subscription (explicit names, and whether the proxy is a wildcard
 * subscriber) and the version of every resource the proxy holds. A response carries only resources whose
 * version (a digest of their bytes) differs from what the proxy holds, plus `removed_resources` for what it
 * holds that no longer exists and for subscribed names that do not exist. `initial_resource_versions` on a
 * reconnect seed what the proxy holds, so unchanged resources are not sent again.
 *
 * Wildcard: a first request for CDS or LDS without names (legacy), or a subscription to "*". Subscription
 * changes are applied from every request, even one with a stale nonce, since they are deltas that would
 * otherwise be lost; only the ACK/NACK part of a stale request is ignored.
 *
 * @module
 */
import { frameDeltaDiscoveryResponse } from "@mesh/proto/discovery_frame";
import type { DeltaDiscoveryRequest } from "@mesh/proto/discovery_request";
import { shortTypeName } from "@mesh/proto/type_urls";
import type { PushRequest } from "../push/push_request.ts";
import type { PushSnapshot } from "../generate/generator.ts";
import { HeldVersions } from "./held_versions.ts";
import { charsOf } from "./name_budget.ts";
import { SubscribedNames } from "./subscribed_names.ts";
import { deltaFraming, type FramedResponse } from "./resource_runs.ts";
import type { VersionedResource } from "./versioned_resource.ts";
import { generateForConnection, XdsConnection, type XdsProtocol } from "./xds_connection.ts";
import { isWildcardType, pushOrder } from "./xds_types.ts";

const WILDCARD = "*";

interface DeltaWatch {
  wildcard: boolean;
  readonly subscribed: SubscribedNames;
  /** Resource name → version the proxy holds. */
  readonly known: HeldVersions;
  /** Subscribed names already reported as not existing. */
  readonly reportedAbsent: Set<string>;
  /**
   * What `initial_resource_versions` put in `known`, counted against the stream's name budget until the
   * first whole answer replaces it with what the server sent.
   */
  claimed: { names: number; chars: number };
}

interface Prepared {
  readonly typeUrl: string;
  readonly bytes: Uint8Array;
  readonly version: string;
  readonly nonce: string;
  readonly changed: readonly VersionedResource[];
  readonly removed: readonly string[];
  readonly absent: readonly string[];
  /**
   * What the proxy holds after it when that is a whole generation (a full one: what it did not get it held
   * already, and what it held beyond it is removed); undefined after a partial one.
   */
  readonly holds?: readonly VersionedResource[];
  readonly builtMs: number;
}

/** One proxy on an incremental ADS stream. */
export class DeltaConnection<P extends PushSnapshot = PushSnapshot> extends XdsConnection<P> {
  /** Always `delta`. */
  readonly protocol: XdsProtocol = "delta";
  readonly #watches = new Map<string, DeltaWatch>();

  /** Subscribed names per type URL; a wildcard subscription shows as "*". */
  watches(): Record<string, readonly string[]> {
    return Object.fromEntries(
      pushOrder(this.#watches.keys()).map((t) => {
        const w = this.#watches.get(t)!;
        return [t, [...(w.wildcard ? [WILDCARD] : []), ...[...w.subscribed].sort()]];
      }),
    );
  }

  /** Applies one DeltaDiscoveryRequest and answers it when it subscribed to something new. */
  async handleRequest(raw: unknown): Promise<void> {
    const request = raw as DeltaDiscoveryRequest;
    const typeUrl = request.type_url;
    if (typeUrl === "") {
      this.ctx.connectionLog.unanswered(this, "ignoring delta ADS request without type_url");
      return;
    }
    let watch = this.#watches.get(typeUrl);
    const first = watch === undefined;
    if (watch === undefined) {
      const initial = request.initial_resource_versions ?? {};
      const claimed = this.#claim(typeUrl, initial);
      watch = {
        wildcard: isWildcardType(typeUrl) && request.resource_names_subscribe.length === 0,
        subscribed: new SubscribedNames(this.ctx.lists),
        known: new HeldVersions(this.ctx.lists, initial),
        reportedAbsent: new Set(),
        claimed,
      };
      this.#watches.set(typeUrl, watch);
    }
    const subscribedMore = this.#applySubscription(typeUrl, watch, request, first);

    const nonce = request.response_nonce;
    const nack = request.error_detail ?? undefined;
    if (nonce !== "" && !this.isLatestNonce(typeUrl, nonce)) {
      this.ctx.metrics.expiredNonce(typeUrl);
      this.ctx.logger.debug("expired nonce on a delta ADS request; subscription changes applied", {
        connection: this.id,
        type: shortTypeName(typeUrl),
        nonce,
      });
    } else if (nack !== undefined) {
      this.recordNack(typeUrl, nonce, nack);
    } else if (nonce !== "") {
      this.recordAck(typeUrl, nonce, this.acks.versionSent(typeUrl) ?? "");
    }
    if (!first && !subscribedMore) return;
    // Answered through the same gate as pushes: a connect storm is throttled like a push.
    await this.gated(async () => {
      if (this.closed) return;
      const response = await this.#prepare(typeUrl, this.ctx.currentPush(), true, undefined, true);
      if (response !== undefined) await this.#sendPrepared(response);
    });
  }

  /** The watches by type URL. */
  protected watchedTypes(): ReadonlyMap<string, DeltaWatch> {
    return this.#watches;
  }

  /** Sends what changed of `typeUrl` (resources whose version the proxy does not hold, and removals). */
  protected async pushType(typeUrl: string, request: PushRequest): Promise<boolean> {
    const response = await this.#prepare(
      typeUrl,
      this.ctx.currentPush(),
      request.full,
      request.configsUpdated,
      false,
    );
    if (response === undefined) return false;
    await this.#sendPrepared(response);
    return true;
  }

  /**
   * Counts a new watch against the stream's name budget: its type URL, and the names and versions of its
   * `initial_resource_versions` (returned, to be released once the server's answer replaces them).
   *
   * @throws {NameLimitError} when one is too long or they pass the budget
   */
  #claim(typeUrl: string, initial: Readonly<Record<string, string>>): { names: number; chars: number } {
    this.nameBudget.checkName(typeUrl, "type URL", typeUrl);
    let names = 0;
    let chars = 0;
    for (const [name, version] of Object.entries(initial)) {
      this.nameBudget.checkName(name, "resource name", typeUrl);
      this.nameBudget.checkName(version, "resource version", typeUrl);
      names++;
      chars += name.length + version.length;
    }
    this.nameBudget.add(1 + names, typeUrl.length + chars, typeUrl);
    return { names, chars };
  }

  /** The proxy now holds exactly `list`: what it claimed to hold no longer counts. */
  #holdExactly(watch: DeltaWatch, list: readonly VersionedResource[], typeUrl: string): void {
    watch.known.holdExactly(list);
    if (watch.claimed.names === 0) return;
    this.nameBudget.add(-watch.claimed.names, -watch.claimed.chars, typeUrl);
    watch.claimed = { names: 0, chars: 0 };
  }

  /**
   * Applies subscribe/unsubscribe; true when something new was subscribed (which needs an answer).
   *
   * @throws {NameLimitError} when a name is too long or the subscription passes the stream's name budget
   */
  #applySubscription(
    typeUrl: string,
    watch: DeltaWatch,
    request: DeltaDiscoveryRequest,
    first: boolean,
  ): boolean {
    let more = false;
    const list = request.resource_names_subscribe;
    for (const name of list) this.nameBudget.checkName(name, "resource name", typeUrl);
    // A first subscription that is exactly a shared list (NameListTable) is kept as that list: proxies
    // subscribing the same names then share it, and with it every per-list cache (memo keys, short-name
    // checks), at no cost per name.
    const adopted = request.resource_names_unsubscribe.length === 0 && watch.subscribed.adopt(list, WILDCARD);
    if (adopted) {
      this.nameBudget.add(list.length, charsOf(list), typeUrl);
      more = true;
    } else {
      for (const name of list) {
        if (name === WILDCARD) {
          more ||= !watch.wildcard;
          watch.wildcard = true;
        } else if (!watch.subscribed.has(name)) {
          this.nameBudget.add(1, name.length, typeUrl);
          watch.subscribed.add(this.ctx.names.intern(name));
          more = true;
        }
      }
    }
    // A repeated subscription asks for the resource again; on the first request the proxy's
    // initial_resource_versions say what it already holds.
    if (!first) {
      for (const name of list) {
        if (name === WILDCARD) continue;
        const held = watch.known.delete(name);
        const reported = watch.reportedAbsent.delete(name);
        if (held || reported) more = true;
      }
    }
    const dropped: string[] = [];
    for (const name of request.resource_names_unsubscribe) {
      if (name === WILDCARD) {
        watch.wildcard = false;
        continue;
      }
      if (watch.subscribed.delete(name)) this.nameBudget.add(-1, -name.length, typeUrl);
      watch.reportedAbsent.delete(name);
    }
    // Only a first request (names held from initial_resource_versions) or an unsubscription can leave the
    // proxy holding names it no longer subscribes: an ACK does not walk what it holds.
    if (!watch.wildcard && (first || request.resource_names_unsubscribe.length > 0)) {
      for (const name of [...watch.known.names()]) {
        if (!watch.subscribed.has(name)) {
          watch.known.delete(name);
          dropped.push(name);
        }
      }
    }
    this.dropSent(typeUrl, dropped);
    return more;
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
    force: boolean,
  ): Promise<Prepared | undefined> {
    const watch = this.#watches.get(typeUrl);
    if (watch === undefined || (!watch.wildcard && watch.subscribed.size === 0)) return undefined;
    const started = performance.now();
    const resources = await generateForConnection(this.ctx, this.id, this.proxy, typeUrl, push, {
      names: watch.wildcard ? [] : watch.subscribed.list(),
      full,
      ...(configsUpdated === undefined ? {} : { configsUpdated }),
    });
    // The stream may have ended while the response was built.
    if (resources === "failed" || this.closed) return undefined;
    if (resources === undefined) {
      this.ctx.connectionLog.unanswered(
        this,
        "no generator for the requested type; the request is not answered",
        {
          type: typeUrl,
          generator: this.ctx.generators.flavorOf(this.proxy),
        },
      );
      return undefined;
    }
    const changed = watch.known.changedIn(resources);
    // All of them (a first answer, usually): the shared list itself, framed once for every proxy of the shape.
    const whole = changed === resources;
    const removed: string[] = [];
    const absent: string[] = [];
    // A partial (endpoint-only) generation says nothing about resources it did not return.
    if (full) {
      const present = this.ctx.lists.indexByName(resources);
      removed.push(...watch.known.namesNotIn(present));
      for (const name of watch.subscribed.notIn(present)) {
        if (!watch.known.has(name) && !watch.reportedAbsent.has(name)) {
          absent.push(name);
        }
      }
    }
    if (changed.length === 0 && removed.length === 0 && absent.length === 0 && !force) {
      // Nothing to send, and the proxy holds exactly this generation: say so, so the next push of the same
      // list is recognised at once.
      if (full) this.#holdExactly(watch, resources, typeUrl);
      this.recordUnchanged(typeUrl, push.version, full ? { resources } : undefined);
      return undefined;
    }
    const version = push.version;
    const nonceVersion = this.nonceVersionFor(version);
    const parts = whole ? deltaParts(resources) : { encoded_resources: changed.map((r) => r.deltaResource) };
    const frame = (): FramedResponse => {
      const nonce = this.ctx.nonces.make(nonceVersion);
      const bytes = frameDeltaDiscoveryResponse({
        system_version_info: version,
        resources: [],
        ...parts,
        type_url: typeUrl,
        removed_resources: [...removed, ...absent],
        nonce,
        ...(this.ctx.controlPlane === undefined ? {} : { control_plane: this.ctx.controlPlane }),
      });
      return { bytes, nonce };
    };
    // A whole list already framed as a run (a first answer of a shape's second proxy on) and nothing to remove:
    // the same response for every proxy handed that list.
    const { bytes, nonce } = parts.resource_run !== undefined && removed.length === 0 && absent.length === 0
      ? this.ctx.lists.sharedResponse(
        resources,
        this.ctx.lists.inputsOf("delta", typeUrl, version, nonceVersion, this.ctx.controlPlane),
        frame,
      )
      : frame();
    return {
      typeUrl,
      bytes,
      version,
      nonce,
      changed,
      removed,
      absent,
      ...(full ? { holds: resources } : {}),
      builtMs: performance.now() - started,
    };
  }

  async #sendPrepared(response: Prepared): Promise<void> {
    const { typeUrl } = response;
    const watch = this.#watches.get(typeUrl);
    if (watch !== undefined) {
      if (response.holds !== undefined) this.#holdExactly(watch, response.holds, typeUrl);
      else {
        for (const r of response.changed) watch.known.set(r.name, r.version);
        for (const name of response.removed) watch.known.delete(name);
      }
      if (watch.reportedAbsent.size > 0) {
        for (const r of response.changed) watch.reportedAbsent.delete(r.name);
      }
      for (const name of response.absent) watch.reportedAbsent.add(name);
    }
    this.recordSent(typeUrl, response.version, response.nonce, response.holds ?? response.changed, {
      replace: response.holds !== undefined,
      removed: response.removed,
    });
    await this.sendCounted(typeUrl, response.bytes, response.builtMs);
    if (this.ctx.logger.debugEnabled) {
      this.ctx.logger.debug("sent delta ADS response", {
        connection: this.id,
        type: shortTypeName(typeUrl),
        changed: response.changed.length,
        removed: response.removed.length + response.absent.length,
        bytes: response.bytes.length,
        nonce: response.nonce,
      });
    }
  }
}

/** The resources of a delta answer carrying a whole list, framed as {@link deltaFraming} decides. */
function deltaParts(
  resources: readonly VersionedResource[],
): { encoded_resources?: readonly Uint8Array[]; resource_run?: Uint8Array } {
  const framed = deltaFraming(resources);
  return framed.run === undefined ? { encoded_resources: framed.inline } : { resource_run: framed.run };
}
