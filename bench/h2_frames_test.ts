import assert from "node:assert/strict";
import {
  CONNECTION_PREFACE,
  decodeSettings,
  encodeFrame,
  encodeGoaway,
  encodeRstStream,
  encodeSettings,
  encodeWindowUpdate,
  FLAG,
  FRAME,
  type Frame,
  FrameReader,
  H2_ERROR,
  H2ConnectionError,
  readUint31,
  readUint32,
  SETTING,
} from "./h2_frames.ts";

/** Every frame `reader` cuts from `chunks`, its payload copied. */
function frames(reader: FrameReader, ...chunks: Uint8Array[]): Frame[] {
  const out: Frame[] = [];
  for (const chunk of chunks) reader.push(chunk, (f) => out.push({ ...f, payload: f.payload.slice() }));
  return out;
}

Deno.test("a frame read back after the preface has the type, flags, stream and payload it was encoded with", () => {
  const payload = new Uint8Array([1, 2, 3, 4, 5]);
  const bytes = new Uint8Array([
    ...CONNECTION_PREFACE,
    ...encodeFrame(FRAME.DATA, FLAG.END_STREAM, 0x7fff_fffd, payload),
  ]);
  assert.deepEqual(frames(new FrameReader(), bytes), [
    { type: FRAME.DATA, flags: FLAG.END_STREAM, streamId: 0x7fff_fffd, payload },
  ]);
});

Deno.test("the frame reader joins frames cut anywhere across reads, the preface included", () => {
  const one = encodeFrame(FRAME.HEADERS, FLAG.END_HEADERS, 1, new Uint8Array([0x83, 0x86]));
  const two = encodeFrame(FRAME.DATA, 0, 1, new Uint8Array(300).fill(7));
  const all = new Uint8Array([...CONNECTION_PREFACE, ...one, ...two]);
  for (const cut of [3, 24, 26, 33, 40, all.length - 1]) {
    const read = frames(new FrameReader(), all.subarray(0, cut), all.subarray(cut));
    assert.deepEqual(
      read.map((f) => [f.type, f.streamId, f.payload.length]),
      [[1, 1, 2], [0, 1, 300]],
      `cut ${cut}`,
    );
  }
});

Deno.test("the frame reader refuses a wrong preface and a frame longer than its maximum", () => {
  assert.throws(
    () => frames(new FrameReader(), new TextEncoder().encode("GET / HTTP/1.1\r\n")),
    (e: unknown) => e instanceof H2ConnectionError && e.code === H2_ERROR.PROTOCOL_ERROR,
  );
  const big = encodeFrame(FRAME.DATA, 0, 1, new Uint8Array(16_385));
  assert.throws(
    () => frames(new FrameReader(16_384, false), big),
    (e: unknown) => e instanceof H2ConnectionError && e.code === H2_ERROR.FRAME_SIZE_ERROR,
  );
});

Deno.test("SETTINGS, WINDOW_UPDATE, RST_STREAM and GOAWAY decode to what they were encoded with", () => {
  const [settings, update, reset, goaway] = frames(
    new FrameReader(16_384, false),
    encodeSettings([[SETTING.INITIAL_WINDOW_SIZE, 268_435_456], [SETTING.MAX_FRAME_SIZE, 16_777_215]]),
    encodeWindowUpdate(3, 0x7fff_ffff),
    encodeRstStream(5, H2_ERROR.CANCEL),
    encodeGoaway(7, H2_ERROR.ENHANCE_YOUR_CALM),
  );
  assert.deepEqual(decodeSettings(settings.payload), [
    [SETTING.INITIAL_WINDOW_SIZE, 268_435_456],
    [SETTING.MAX_FRAME_SIZE, 16_777_215],
  ]);
  assert.deepEqual([update.type, update.streamId, readUint31(update.payload, 0)], [
    FRAME.WINDOW_UPDATE,
    3,
    0x7fff_ffff,
  ]);
  assert.deepEqual([reset.type, reset.streamId, readUint32(reset.payload, 0)], [
    FRAME.RST_STREAM,
    5,
    H2_ERROR.CANCEL,
  ]);
  assert.deepEqual(
    [goaway.type, goaway.streamId, readUint31(goaway.payload, 0), readUint32(goaway.payload, 4)],
    [FRAME.GOAWAY, 0, 7, H2_ERROR.ENHANCE_YOUR_CALM],
  );
  assert.throws(
    () => decodeSettings(new Uint8Array(5)),
    (e: unknown) => e instanceof H2ConnectionError && e.code === H2_ERROR.FRAME_SIZE_ERROR,
  );
});
