/**
 * Reports what a gRPC server receives to a `TrafficSink`: every request message's size, as its method's
 * deserializer is handed it, and every call's end, from an interceptor that sees each call (refused ones too).
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type { TrafficSink } from "../process/traffic_meter.ts";

/** `definition` with each method's request deserializer first telling `sink` the message's size. */
export function countedDefinition<D extends grpc.ServiceDefinition>(definition: D, sink: TrafficSink): D {
  const counted: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(definition)) {
    const deserialize = method.requestDeserialize;
    counted[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        sink.received(bytes.length);
        return deserialize(bytes);
      },
    };
  }
  return counted as D;
}

/** An interceptor that tells `sink` of every call's end (grpc-js reports every close as a cancel). */
export function callEndInterceptor(sink: TrafficSink): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) => next({ onCancel: () => sink.ended() }),
    });
}
