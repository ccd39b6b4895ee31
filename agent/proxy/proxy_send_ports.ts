/**
 * The send ports of the agent's servers to its proxy (the xDS relay and SDS): each response is sent through
 * a {@link SendPort} and must leave the socket within {@link PROXY_SEND_TIMEOUT_MS}, or the stream is ended
 * and the proxy, which reconnects, gets the current state again. A proxy that stopped reading then holds no
 * more than one response per stream in the agent, never an ever-growing queue.
 *
 * @module
 */
import { SendDeadlines } from "@mesh/shared/grpc/send_deadlines";
import { SendPorts } from "@mesh/shared/grpc/send_port";
import type { Timers } from "@mesh/shared/time/timers";

/** How long the local proxy may take to read one response before its stream is ended, in milliseconds. */
export const PROXY_SEND_TIMEOUT_MS = 30_000;

/** The send ports of one of the agent's servers; deadlines on `timers` (default the runtime's). */
export function proxySendPorts(timers?: Timers, timeoutMs: number = PROXY_SEND_TIMEOUT_MS): SendPorts {
  return new SendPorts({
    deadlines: new SendDeadlines(timeoutMs, timers),
    setting: "the agent's proxy send timeout",
  });
}
