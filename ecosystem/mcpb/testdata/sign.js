// Copied from anthropics/mcpb src/node/sign.ts (signMcpbFile), as JavaScript.
const fs = require("fs"); const forge = require("node-forge");
const [mcpbPath, certPath, keyPath, out] = process.argv.slice(2);
const mcpbContent = fs.readFileSync(mcpbPath);
const p7 = forge.pkcs7.createSignedData();
p7.content = forge.util.createBuffer(mcpbContent);
const signingCert = forge.pki.certificateFromPem(fs.readFileSync(certPath, "utf-8"));
const privateKey = forge.pki.privateKeyFromPem(fs.readFileSync(keyPath, "utf-8"));
p7.addCertificate(signingCert);
p7.addSigner({ key: privateKey, certificate: signingCert, digestAlgorithm: forge.pki.oids.sha256,
  authenticatedAttributes: [ { type: forge.pki.oids.contentType, value: forge.pki.oids.data },
    { type: forge.pki.oids.messageDigest }, { type: forge.pki.oids.signingTime } ] });
p7.sign({ detached: true });
const sig = Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), "binary");
const len = Buffer.alloc(4); len.writeUInt32LE(sig.length, 0);
fs.writeFileSync(out, Buffer.concat([mcpbContent, Buffer.from("MCPB_SIG_V1"), len, sig, Buffer.from("MCPB_SIG_END")]));
