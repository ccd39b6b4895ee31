import assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { grpcCodeName, grpcStatus, GrpcStatusError } from "./grpc_status.ts";
import { ECHO_DEFINITION, EchoTestClient, startEchoServer } from "./_test_echo_service.ts";

Deno.test("grpcStatus carries its code and details, and the retry pushback as a trailer", () => {
  const status = grpcStatus(grpc.status.RESOURCE_EXHAUSTED, "Too many streams", { retryAfterMs: 1500.2 });
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.equal(status.details, "Too many streams");
  assert.deepEqual(status.metadata.get("grpc-retry-pushback-ms"), ["1501"]);
  assert.deepEqual(grpcStatus(grpc.status.INTERNAL, "x").metadata.getMap(), {});
});

Deno.test("a handler's GrpcStatusError reaches the client as its code, details and trailers", async () => {
  const { server } = await startEchoServer({
    services: [{
      definition: { Echo: ECHO_DEFINITION.Echo },
      implementation: {
        Echo: (_call: unknown, done: grpc.sendUnaryData<never>) =>
          done(
            new GrpcStatusError(grpc.status.UNAVAILABLE, "Signing queue full", {
              retryAfterMs: 200,
              cause: new Error("queue"),
            }),
          ),
      },
    }],
  });
  const client = new EchoTestClient(server.address);
  try {
    const error = await client.unary("Echo", Uint8Array.of(1)).then(() => undefined, (e) => e);
    assert.equal(error?.code, grpc.status.UNAVAILABLE);
    assert.equal(error?.details, "Signing queue full");
    assert.deepEqual(error?.metadata.get("grpc-retry-pushback-ms"), ["200"]);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("grpcCodeName spells a code as Go does, and an unknown one by its number", () => {
  assert.equal(grpcCodeName(grpc.status.INVALID_ARGUMENT), "InvalidArgument");
  assert.equal(grpcCodeName(grpc.status.UNAUTHENTICATED), "Unauthenticated");
  assert.equal(grpcCodeName(42), "Code(42)");
});
