/**
 * The one way a gRPC status is written: a handler throws, rejects with, emits or calls back with a
 * {@link GrpcStatusError}, and an interceptor sends a {@link grpcStatus}; grpc-js ends the call with the code,
 * the details and the trailers either carries.
 *
 * @module
 */
import * as grpc from "@grpc/grpc-js";

/** A status as grpc-js sends it: a code, what went wrong, and the trailers. */
export interface GrpcStatus {
  readonly code: grpc.status;
  readonly details: string;
  readonly metadata: grpc.Metadata;
}

/**
 * A check's verdict against a call or stream (authentication, authorization, admission of the first request):
 * the status it ends with. Checks return it rather than throw, so the caller counts and logs it once.
 */
export interface GrpcRefusal {
  readonly code: grpc.status;
  readonly details: string;
}

/** What may come with a status besides its code and details. */
export interface GrpcStatusOptions {
  /** Milliseconds the client should wait before trying again: the `grpc-retry-pushback-ms` trailer. */
  readonly retryAfterMs?: number;
  /** The error the status reports, kept for logs. */
  readonly cause?: unknown;
}

/** gRPC status code names as Go spells them, as metrics and logs label them. */
const CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
];

/** Go's name of a gRPC status code, e.g. 3 → "InvalidArgument"; unknown codes as `Code(n)`. */
export function grpcCodeName(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}

function trailers(options: GrpcStatusOptions): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (options.retryAfterMs !== undefined) {
    metadata.set("grpc-retry-pushback-ms", String(Math.max(0, Math.ceil(options.retryAfterMs))));
  }
  return metadata;
}

/** The status `code` with `details`, for `sendStatus` (an interceptor) or an emitted error. */
export function grpcStatus(code: grpc.status, details: string, options: GrpcStatusOptions = {}): GrpcStatus {
  return { code, details, metadata: trailers(options) };
}

/** An error that ends a gRPC call with `code`: its message is the status details. */
export class GrpcStatusError extends Error implements GrpcStatus {
  readonly metadata: grpc.Metadata;

  constructor(readonly code: grpc.status, details: string, options: GrpcStatusOptions = {}) {
    super(details, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GrpcStatusError";
    this.metadata = trailers(options);
  }

  /** The status details (the message), under the name grpc-js reads. */
  get details(): string {
    return this.message;
  }
}
