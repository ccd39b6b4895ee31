// @peculiar/x509 needs reflect-metadata loaded first and a WebCrypto provider before any use; every pki module
// imports the library through this file so that order holds no matter which module loads first.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(crypto);

export { x509 };
