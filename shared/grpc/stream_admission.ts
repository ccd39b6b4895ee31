/**
 * A grpc-js server interceptor that admits each new stream through a `GrpcAdmission`: a stream over a bound ends
 * at once with RESOURCE_EXHAUSTED naming the bound and its setting, before its handler runs; an admitted one
 * holds its place until the stream closes.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import { type AdmissionRefusal, type GrpcAdmission, isRefusal } from "./grpc_admission.ts";
import { grpcStatus } from "./grpc_status.ts";

/** The interceptor; `refused` is told of every stream it refused. */
export function streamAdmissionInterceptor(
  admission: GrpcAdmission,
  refused: (refusal: AdmissionRefusal) => void,
): grpc.ServerInterceptor {
  return (_method, call) => {
    const result = admission.admitStream(call.getConnectionInfo().remoteAddress);
    if (isRefusal(result)) {
      refused(result);
      // The handler starts on the request metadata: withheld, it never starts.
      return new grpc.ServerInterceptingCall(call, {
        start: (next) =>
          next({
            onReceiveMetadata: () =>
              call.sendStatus(grpcStatus(grpc.status.RESOURCE_EXHAUSTED, result.message)),
          }),
      });
    }
    // grpc-js reports every stream's close as a cancel, whether or not it ended with a status.
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => next({ onCancel: () => result.release() }),
    });
  };
}
