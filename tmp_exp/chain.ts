import "reflect-metadata";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { createSelfSignedCa, issueCertificate } from "../shared/pki/mod.ts";
import { exportPrivateKeyPem } from "../shared/pki/private_key_pem.ts";
import { certificatesToPem } from "../shared/pki/certificate_pem.ts";
import { generateKeyPair } from "../shared/pki/key_pair.ts";
import { startGrpcServer } from "../shared/grpc/grpc_server.ts";
import { silentLogger } from "../shared/log/logger.ts";
import { ECHO_DEFINITION, EchoTestClient } from "../shared/grpc/_test_echo_service.ts";
const root = await createSelfSignedCa({ org: "r", ttlMs: 3_600_000, keyAlgorithm: "ECDSA" });
const interKeys = await generateKeyPair({ algorithm: "ECDSA" });
const interCert = await issueCertificate(
  root,
  { publicKey: interKeys.publicKey, ttlMs: 3_600_000, isCa: true, commonName: "inter" } as any,
);
console.log("inter basic", interCert.subject);
const leaf = async (usage: "server" | "client", names: any) => {
  const keys = await generateKeyPair({ algorithm: "ECDSA" });
  const cert = await issueCertificate(root, {
    ...names,
    publicKey: keys.publicKey,
    ttlMs: 3_600_000,
    usages: [usage],
  });
  return { keyPem: await exportPrivateKeyPem(keys.privateKey), certPem: certificatesToPem([cert]) };
};
const server = await leaf("server", { dnsNames: ["x.test"] });
const clientL = await leaf("client", { uris: ["spiffe://a/ns/b/sa/c"] });
const s = await startGrpcServer({
  name: "t",
  listen: { tcp: "127.0.0.1:0", flag: "--x" },
  logger: silentLogger,
  tls: {
    keyPem: server.keyPem,
    certChainPem: server.certPem,
    caPem: root.certificatePem,
    requireClientCert: true,
  },
  services: [{
    definition: ECHO_DEFINITION,
    implementation: {
      Echo: (call: any, cb: any) => {
        const sock = call.call.stream.session.socket;
        const d = call.getAuthContext().sslPeerCertificate;
        let x = d;
        const seen = [];
        while (x && seen.length < 5) {
          seen.push(JSON.stringify(x.subject) + " raw=" + (x.raw?.length));
          if (x.issuerCertificate === x) {
            seen.push("(self)");
            break;
          }
          x = x.issuerCertificate;
        }
        console.log(seen.join(" -> "));
        cb(null, Buffer.from("x"));
      },
      Peer: (c: any, cb: any) => cb(null, Buffer.from("")),
      Hold: (c: any) => {},
    } as any,
  }],
});
const enc = (t: string) => Buffer.from(t);
const c = new EchoTestClient(
  s.address,
  grpc.credentials.createSsl(enc(root.certificatePem), enc(clientL.keyPem), enc(clientL.certPem)),
  { "grpc.ssl_target_name_override": "x.test" },
);
await c.unary("Echo", new Uint8Array(1));
c.close();
await s.close(10);
