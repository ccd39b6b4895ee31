import assert from "node:assert/strict";
import { CURL, needs } from "@mesh/shared/testing/system_tools";
import { RecordingLogger } from "@mesh/shared/testing/recording_logger";
import { testMetrics } from "./_test_support.ts";
import { startWebhookServer } from "./webhook_server.ts";

/**
 * Runs curl over HTTP/2 with `body` POSTed to `url` `times` times (a fresh connection each run), and returns
 * the status of each answer, `000` where curl got none.
 */
async function curlPosts(
  url: string,
  caPem: string,
  body: Uint8Array,
  contentType: string,
  times: number,
): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "webhook_http2_test_" });
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, caPem);
    await Deno.writeFile(`${dir}/body`, body);
    // One after another: a client waiting on its own request is when the answer races the body.
    const statuses: string[] = [];
    for (let i = 0; i < times; i++) {
      const { stdout } = await new Deno.Command("curl", {
        args: [
          "--http2",
          "--silent",
          "--output",
          "/dev/null",
          "--write-out",
          "%{http_code}",
          "--max-time",
          "20",
          "--cacert",
          `${dir}/ca.pem`,
          "--header",
          `content-type: ${contentType}`,
          "--data-binary",
          `@${dir}/body`,
          url,
        ],
        stdout: "piped",
        stderr: "null",
      }).output();
      statuses.push(new TextDecoder().decode(stdout).trim());
    }
    return statuses;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function tally(statuses: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

Deno.test(
  "Over HTTP/2 every refused webhook request gets its answer, none a reset stream",
  needs(CURL),
  async (t) => {
    const webhook = await startWebhookServer({
      addr: "127.0.0.1:0",
      metrics: testMetrics(),
      log: new RecordingLogger(),
      validationEnabled: true,
    });
    try {
      await t.step("a body that is not JSON is answered 415, every one of 200 times", async () => {
        const body = new TextEncoder().encode("not json ".repeat(300));
        const statuses = await curlPosts(
          `${webhook.url}/validate`,
          webhook.tls.caPem!,
          body,
          "text/plain",
          200,
        );
        assert.deepEqual(tally(statuses), { "415": 200 });
      });
      await t.step("a body over 3 MiB is answered 413", async () => {
        const body = new Uint8Array(3 * 1024 * 1024 + 512 * 1024).fill(32);
        const statuses = await curlPosts(
          `${webhook.url}/validate`,
          webhook.tls.caPem!,
          body,
          "application/json",
          3,
        );
        assert.deepEqual(tally(statuses), { "413": 3 });
      });
    } finally {
      await webhook.shutdown();
    }
  },
);
