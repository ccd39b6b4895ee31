/**
 * Test helper: a plain ADS client on grpc-js with byte-level serializers. Requests are written as plain
 * objects and encoded with Envoy's schema; responses are decoded, resources included.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import { loadEnvoySchema } from "@mesh/proto/envoy_schema";
import { decodeAny, messageTypeForUrl } from "@mesh/proto/any_codec";
import { type JsonObject, jsonToStruct } from "@mesh/proto/struct_json";
import { ADS_SERVICE_DEFINITION } from "@mesh/proto/ads_service";

const schema = loadEnvoySchema();
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, arrays: true };

/** A decoded resource: its type URL, name and fields. */
export interface TestResource {
  readonly typeUrl: string;
  readonly name: string;
  readonly fields: Record<string, unknown>;
  /** The resource's encoded message (the Any's `value`). */
  readonly value: Uint8Array;
}

/** A decoded DiscoveryResponse or DeltaDiscoveryResponse. */
export interface TestResponse {
  readonly typeUrl: string;
  readonly nonce: string;
  /** `version_info` (state of the world) or `system_version_info` (delta). */
  readonly version: string;
  readonly resources: readonly TestResource[];
  /** Delta only: per-resource versions by name. */
  readonly versions: Readonly<Record<string, string>>;
  /** Delta only. */
  readonly removed: readonly string[];
  readonly bytes: number;
}

/** How the stream ended. */
export interface TestStatus {
  readonly code: number;
  readonly details: string;
}

/** An xDS node for requests, with metadata as JSON. */
export function testNode(id: string, metadata: JsonObject = {}): Record<string, unknown> {
  return { id, metadata: jsonToStruct(metadata) };
}

/** The name field of the common xDS resource types. */
function resourceName(fields: Record<string, unknown>): string {
  return String(fields.name ?? fields.cluster_name ?? "");
}

function decodeResource(any: { type_url: string; value: Uint8Array }): TestResource {
  const type = messageTypeForUrl(any.type_url, schema);
  const fields = type.toObject(type.decode(any.value), TO_OBJECT);
  return { typeUrl: any.type_url, name: resourceName(fields), fields, value: any.value };
}

const ADS_CLIENT = grpc.makeClientConstructor(ADS_SERVICE_DEFINITION, "AggregatedDiscoveryService");

/** One ADS stream to a server on 127.0.0.1. */
export class TestAdsClient {
  readonly #client: grpc.Client;
  readonly #call: grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
  readonly #requestType: protobuf.Type;
  readonly #responseType: protobuf.Type;
  readonly #queue: TestResponse[] = [];
  readonly #waiters: { deliver(r: TestResponse): void; fail(error: Error): void }[] = [];
  readonly #ended = Promise.withResolvers<TestStatus>();

  private constructor(
    port: number,
    readonly delta: boolean,
    credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
    serverName?: string,
  ) {
    this.#client = new ADS_CLIENT(`127.0.0.1:${port}`, credentials, {
      "grpc.max_receive_message_length": -1,
      ...(serverName ? { "grpc.ssl_target_name_override": serverName } : {}),
    });
    const method = delta ? "DeltaAggregatedResources" : "StreamAggregatedResources";
    // deno-lint-ignore no-explicit-any
    this.#call = (this.#client as any)[method]();
    const prefix = "envoy.service.discovery.v3.";
    this.#requestType = schema.lookupType(prefix + (delta ? "DeltaDiscoveryRequest" : "DiscoveryRequest"));
    this.#responseType = schema.lookupType(prefix + (delta ? "DeltaDiscoveryResponse" : "DiscoveryResponse"));
    this.#call.on("data", (bytes: Uint8Array) => this.#receive(bytes));
    this.#call.on("status", (s: grpc.StatusObject) => {
      this.#ended.resolve({ code: s.code, details: s.details });
      // No response can come any more: a test waiting for one learns it now, not at its timeout.
      for (const waiter of this.#waiters.splice(0)) {
        waiter.fail(new Error(`The stream ended with status ${s.code} before a response: ${s.details}`));
      }
    });
    this.#call.on("error", () => {});
  }

  /** Opens a state-of-the-world stream. */
  static sotw(port: number): TestAdsClient {
    return new TestAdsClient(port, false);
  }

  /** Opens a state-of-the-world stream over TLS, checking the server's certificate for `serverName`. */
  static sotwTls(port: number, credentials: grpc.ChannelCredentials, serverName: string): TestAdsClient {
    return new TestAdsClient(port, false, credentials, serverName);
  }

  /** Opens an incremental stream. */
  static delta(port: number): TestAdsClient {
    return new TestAdsClient(port, true);
  }

  /** Sends a request written as a plain object with `.proto` field names. */
  send(request: Record<string, unknown>): void {
    const message = this.#requestType.fromObject(request);
    this.#call.write(this.#requestType.encode(message).finish());
  }

  /**
   * ACKs `response`: on a state-of-the-world stream by its version and nonce, restating `names` (the names
   * still watched); on an incremental stream by its nonce alone.
   */
  ack(response: TestResponse, names: readonly string[] = []): void {
    this.send(
      this.delta ? { type_url: response.typeUrl, response_nonce: response.nonce } : {
        type_url: response.typeUrl,
        version_info: response.version,
        response_nonce: response.nonce,
        resource_names: names,
      },
    );
  }

  /** Sends raw bytes as one message, e.g. something that is not a DiscoveryRequest. */
  sendBytes(bytes: Uint8Array): void {
    this.#call.write(bytes);
  }

  /**
   * The next response; rejects when the stream ends first, or after `timeoutMs` so a missing response fails
   * the test instead of hanging it.
   */
  next(timeoutMs = 10_000): Promise<TestResponse> {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`No ADS response within ${timeoutMs}ms`));
      }, timeoutMs);
      const waiter = {
        deliver: (r: TestResponse) => {
          clearTimeout(timer);
          resolve(r);
        },
        fail: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#waiters.push(waiter);
    });
  }

  /** Responses received and not yet taken by `next`. */
  get buffered(): number {
    return this.#queue.length;
  }

  /** Resolves with the stream's final status. */
  ended(): Promise<TestStatus> {
    return this.#ended.promise;
  }

  /** Closes the stream and the channel. */
  close(): void {
    this.#call.end();
    this.#call.cancel();
    this.#client.close();
  }

  #receive(bytes: Uint8Array): void {
    const object = this.#responseType.toObject(this.#responseType.decode(bytes), TO_OBJECT);
    const response: TestResponse = this.delta
      ? {
        typeUrl: object.type_url,
        nonce: object.nonce,
        version: object.system_version_info,
        resources: (object.resources as { resource?: { type_url: string; value: Uint8Array } }[])
          .filter((r) => r.resource !== undefined && r.resource !== null)
          .map((r) => decodeResource(r.resource!)),
        versions: Object.fromEntries(
          (object.resources as { name: string; version: string }[]).map((r) => [r.name, r.version]),
        ),
        removed: object.removed_resources,
        bytes: bytes.length,
      }
      : {
        typeUrl: object.type_url,
        nonce: object.nonce,
        version: object.version_info,
        resources: (object.resources as { type_url: string; value: Uint8Array }[]).map(decodeResource),
        versions: {},
        removed: [],
        bytes: bytes.length,
      };
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter.deliver(response);
    else this.#queue.push(response);
  }
}

/** A received resource as plain JSON with embedded typed configs expanded, as Envoy reads it. */
export function plainResource(resource: { typeUrl: string; value: Uint8Array }): Record<string, unknown> {
  const anyType = schema.lookupType("google.protobuf.Any");
  const bytes = anyType.encode(anyType.create({ type_url: resource.typeUrl, value: resource.value }))
    .finish();
  return decodeAny(bytes, schema).resource;
}
