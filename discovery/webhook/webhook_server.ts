import type { Logger } from "@mesh/shared/log/logger";
import type { Metrics } from "@mesh/shared/metrics/metrics";
import { type ListenAddress, parseListenAddress } from "@mesh/shared/http/listen_address";
import { Router } from "@mesh/shared/http/router";
import { type RunningServer, serveHttp, type ServeLimits } from "@mesh/shared/http/serve";
import { loadServingTls, type ServingTls } from "./serving_tls.ts";
import { followServingTlsFiles } from "./serving_tls_files.ts";
import {
  ADMISSION_BODY_LIMITS,
  type ValidationVerdict,
  validationWebhookRoutes,
} from "./validation_webhook.ts";
import { OffThreadJobs } from "@mesh/shared/process/off_thread_jobs";

/** The readiness path of the HTTPS server; answers 200 once the server listens. */
export const HTTPS_READY_PATH = "/httpsReady";

/** Options of `startWebhookServer`. */
export interface WebhookServerOptions {
  /** `--httpsAddr`, e.g. `:15017`, or an already parsed address. */
  readonly addr: string | ListenAddress;
  /** `--tlsCertFile`; empty or absent means a self-signed certificate. */
  readonly tlsCertFile?: string;
  /** `--tlsKeyFile`; must be given together with `tlsCertFile`. */
  readonly tlsKeyFile?: string;
  /** Names on the self-signed certificate (default `webhookServingNames()`). */
  readonly servingNames?: readonly string[];
  /** Issues the serving certificate when no files are given (the built-in CA). */
  readonly issue?: (names: readonly string[]) => Promise<{ cert: string; key: string; caPem: string }>;
  /** `VALIDATION_ENABLED`: when false, `/validate` and `/admitpilot` are not registered (404). */
  readonly validationEnabled: boolean;
  /** Where validation counters are recorded. */
  readonly metrics: Metrics;
  /** Logger of the server and its webhooks. */
  readonly log: Logger;
  /**
   * A router with more webhooks already registered (the injection webhook's `/inject`); the server adds its own
   * routes to it. Routes may also be added to the returned `router` later.
   */
  readonly router?: Router;
  /** Connection and request bounds, and where refusals are counted (defaults without metrics if absent). */
  readonly limits?: ServeLimits;
  /** The certificate already loaded (startup checks the files before opening any port); loaded here if absent. */
  readonly tls?: ServingTls;
}

/** The running webhook server. */
export interface WebhookServer {
  /** The underlying HTTPS server. */
  readonly server: RunningServer;
  /** The routes served; more may be added while running. */
  readonly router: Router;
  /** The certificate and key being served now (renewed files replace it), and where they came from. */
  readonly tls: ServingTls;
  /** The worker that judges large validation reviews, when validation is enabled. */
  readonly validationJobs?: OffThreadJobs<string, ValidationVerdict>;
  /** `https://host:port` of the bound address. */
  readonly url: string;
  /** Stops the server; resolves once it has finished. */
  shutdown(): Promise<void>;
}

/** Starts the HTTPS webhook server: `/httpsReady`, and the validation webhook when enabled. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const addr = typeof options.addr === "string"
    ? parseListenAddress(options.addr, "--httpsAddr")
    : options.addr;
  let tls = options.tls ?? await loadServingTls(options);
  const router = options.router ?? new Router();
  router.add(
    HTTPS_READY_PATH,
    "Readiness of the HTTPS webhook server",
    () => new Response(null, { status: 200 }),
  );
  let validationJobs: OffThreadJobs<string, ValidationVerdict> | undefined;
  if (options.validationEnabled) {
    validationJobs = new OffThreadJobs({
      worker: new URL("./validation_worker.ts", import.meta.url),
      maxRunMs: ADMISSION_BODY_LIMITS.timeoutMs,
    });
    validationWebhookRoutes(router, {
      metrics: options.metrics,
      log: options.log,
      offThread: { jobs: validationJobs },
    });
  } else {
    options.log.info("Validation webhook disabled by VALIDATION_ENABLED=false");
  }
  const server = await serveHttp(
    "webhook server",
    addr,
    router.handle,
    options.log,
    {
      cert: tls.cert,
      key: tls.key,
    },
    "--httpsAddr",
    options.limits,
  );
  // Certificate files are followed, as the reference follows them: a renewal reaches new connections.
  const files = tls.source === "files" && options.tlsCertFile && options.tlsKeyFile
    ? followServingTlsFiles(
      { tlsCertFile: options.tlsCertFile, tlsKeyFile: options.tlsKeyFile, current: tls, log: options.log },
      (next) => {
        server.updateTls(next);
        tls = next;
      },
    )
    : undefined;
  const shutdown = async () => {
    files?.close();
    await server.shutdown();
    validationJobs?.close();
  };
  return {
    server,
    router,
    get tls() {
      return tls;
    },
    url: server.url,
    validationJobs,
    shutdown,
  };
}
