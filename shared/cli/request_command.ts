import { NotListeningError, sendAdminRequest } from "../http/http_request.ts";
import type { CommandSpec } from "./command_spec.ts";

/** Builds `request <method> <path> [body]` against a local HTTP address (monitoring or proxy admin). */
export function requestCommand(baseUrl: string, summary: string): CommandSpec {
  return {
    name: "request",
    summary,
    description: `${summary}. Sends <method> <path> [<body>] to ${baseUrl} and prints the response body.`,
    args: [{ name: "method", required: true }, { name: "path", required: true }, {
      name: "body",
      required: false,
    }],
    async run(ctx) {
      const [method, path, body] = ctx.args;
      try {
        const result = await sendAdminRequest(baseUrl, method, path, body);
        if (!result.ok) {
          ctx.io.stderr(
            `Error: ${method.toUpperCase()} ${path} returned status ${result.status}\n${result.body}\n`,
          );
          return 1;
        }
        ctx.io.stdout(result.body.endsWith("\n") || result.body === "" ? result.body : `${result.body}\n`);
        return 0;
      } catch (error) {
        if (error instanceof NotListeningError) {
          ctx.io.stderr(`Error: ${error.message}; is the server running?\n`);
          return 1;
        }
        throw error;
      }
    },
  };
}
