import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createRequire } from "node:module";
import * as grpc from "@grpc/grpc-js";
import { GRPC_JS_VERSION } from "./grpc_js_pin.ts";
import { baseServerCall } from "./base_server_call.ts";
import { outboundState, socketBytesWritten } from "./outbound_state.ts";
import { sessionOf } from "./outbound_turns.ts";
import { sendPrefixedWithoutCopy } from "./prefixed_send.ts";
import { clientCallDecoder } from "./decoded_chunk_release.ts";
import { startGrpcServer } from "./grpc_server.ts";
import { ECHO_DEFINITION } from "./_test_echo_service.ts";
import { silentLogger } from "../log/logger.ts";

const CHANGED = `@grpc/grpc-js ${GRPC_JS_VERSION} is pinned because shared/grpc reads its private members`;

Deno.test("deno.json imports exactly the grpc-js version the send port was written against", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  assert.equal(
    config.imports["@grpc/grpc-js"],
    `npm:@grpc/grpc-js@${GRPC_JS_VERSION}`,
    `${CHANGED}: pin it exactly, or check every member grpc_js_pin.ts lists and move GRPC_JS_VERSION`,
  );
  const installed = createRequire(import.meta.url)("@grpc/grpc-js/package.json").version;
  assert.equal(installed, GRPC_JS_VERSION, `${CHANGED}, but ${installed} is installed`);
});

Deno.test("The grpc-js members the send port and the server read are where the pinned version has them", async () => {
  const seen = Promise.withResolvers<Record<string, unknown>>();
  const server = await startGrpcServer({
    name: "Pin",
    listen: { tcp: "127.0.0.1:0", flag: "--testAddr" },
    logger: silentLogger,
    services: [{
      definition: ECHO_DEFINITION,
      implementation: {
        Hold: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          // deno-lint-ignore no-explicit-any
          const inner = baseServerCall(call) as any;
          const stream = inner?.stream;
          seen.resolve({
            "the server call's inner call (`call`, `nextCall`, `stream`)": inner,
            "sendMessage": typeof inner?.sendMessage === "function",
            "sendStatus": typeof inner?.sendStatus === "function",
            "checkCancelled": typeof inner?.checkCancelled === "function",
            "maybeSendMetadata": typeof inner?.maybeSendMetadata === "function",
            "handler.serialize": typeof inner?.handler?.serialize === "function",
            "maxSendMessageSize": typeof inner?.maxSendMessageSize === "number",
            "stream.write": typeof stream?.write === "function",
            "stream.writableLength": typeof stream?.writableLength === "number",
            "stream.session.socket.bytesWritten": typeof socketBytesWritten(call) === "number",
            "stream.session.state.remoteWindowSize": outboundState(call) !== undefined,
            "stream.session": sessionOf(call) !== undefined,
            "the prefixed writes installed": sendPrefixedWithoutCopy(call),
            "decoder (readState, readCompressFlag, readPartialMessage, write)":
              typeof inner?.decoder?.readState === "number" &&
              Buffer.isBuffer(inner.decoder.readCompressFlag) &&
              Array.isArray(inner.decoder.readPartialMessage) && typeof inner.decoder.write === "function",
          });
          call.end();
        },
      },
    }],
  });
  const Client = grpc.makeClientConstructor(ECHO_DEFINITION, "Echo");
  const client = new Client(server.address, grpc.credentials.createInsecure());
  try {
    // deno-lint-ignore no-explicit-any
    const call = (client as any).Hold() as grpc.ClientDuplexStream<Buffer, Buffer>;
    call.on("data", () => {});
    call.on("error", () => {});
    const members = await seen.promise;
    // deno-lint-ignore no-explicit-any
    const clientDecoder = clientCallDecoder(call) as any;
    members[
      "the client stream's call chain down to its decoder (`call`, `nextCall`, `child`, `underlyingCalls`)"
    ] = typeof clientDecoder?.readState === "number" && Array.isArray(clientDecoder.readPartialMessage);
    call.end();
    for (const [member, present] of Object.entries(members)) {
      assert.ok(present, `${CHANGED}, and ${member} is no longer there: check the version and the readers`);
    }
  } finally {
    client.close();
    await server.close(0);
  }
});
