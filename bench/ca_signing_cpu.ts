/**
 * Where the CPU time of one CSR signing goes, by thread: the event loop's (the process's main thread under
 * `deno run`) or the others (where WebCrypto computes signatures). Parsing and building the certificate run
 * on the event loop; only what runs there can stall it. Linux only; Deno lets only `-A` read `/proc/<pid>`:
 *
 *     deno run -A bench/ca_signing_cpu.ts
 *
 * @module
 */
import {
  createCertificateRequest,
  generateKeyPair,
  issueCertificate,
  parseCertificateRequestPem,
} from "../shared/pki/mod.ts";
import { openBenchCaKeys } from "./_ca_keys.ts";
import { signCsr } from "../discovery/ca/ca_signer.ts";

/** CPU milliseconds of the main thread and of all others (utime + stime, clock ticks of 10 ms). */
function threadCpuMs(): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const task of Deno.readDirSync(`/proc/${Deno.pid}/task`)) {
    try {
      const stat = Deno.readTextFileSync(`/proc/${Deno.pid}/task/${task.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      if (task.name === String(Deno.pid)) main += ms;
      else others += ms;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return { main, others };
}

async function measure(label: string, runs: number, step: () => Promise<unknown>): Promise<void> {
  const before = threadCpuMs();
  const started = performance.now();
  for (let i = 0; i < runs; i++) await step();
  const after = threadCpuMs();
  const each = (ms: number) => (ms / runs).toFixed(2).padStart(6);
  console.log(
    `${label.padEnd(34)} wall ${each(performance.now() - started)} ms, event loop ${
      each(after.main - before.main)
    } ms, other threads ${each(after.others - before.others)} ms`,
  );
}

const keys = await openBenchCaKeys();
const pair = await generateKeyPair({ algorithm: "ECDSA" });
const csr = await createCertificateRequest(pair, { uris: ["spiffe://cluster.local/ns/a/sa/b"] });
const large = await createCertificateRequest(pair, {
  dnsNames: Array.from({ length: 4000 }, (_, i) => `host-${i}.example.com`),
});
const parsed = await parseCertificateRequestPem(csr);
const policy = { defaultTtlMs: 3_600_000, maxTtlMs: 7_200_000 };
const identities = ["spiffe://cluster.local/ns/a/sa/b"];
const data = new Uint8Array(600);

await measure(
  "RSA-2048 signature (WebCrypto)",
  500,
  () => crypto.subtle.sign("RSASSA-PKCS1-v1_5", keys.current.signer.keys.privateKey, data),
);
await measure("parse and verify a 1 KB CSR", 500, () => parseCertificateRequestPem(csr));
await measure(
  "build and sign the certificate",
  500,
  () => issueCertificate(keys.current.signer, { csr: parsed, ttlMs: 3_600_000, uris: identities }),
);
await measure(
  "signCsr, 1 KB CSR",
  500,
  () => signCsr({ csrPem: csr, validitySeconds: 0, identities }, keys.current, policy, new Date()),
);
await measure(
  `signCsr, ${Math.round(large.length / 1024)} KB CSR (4000 SANs)`,
  20,
  () => signCsr({ csrPem: large, validitySeconds: 0, identities }, keys.current, policy, new Date()),
);
await measure("RSA-2048 key pair (a root's rotation)", 5, () => generateKeyPair({ algorithm: "RSA" }));
