#!/usr/bin/env node
// @@TITLE@@
//
// Exported by psd2-console. This program rebuilds the request and signs it afresh every time
// it runs, as the interface document's Authentication rules 4-9 say; it sends it, prints the
// status, the response headers and the body, and exits 0 for a 2xx answer, 1 otherwise.
//
//   node request.mjs [--base-url URL] [--cert FILE] [--key FILE] [--dry-run]
//
// The certificate and key are read from files, never written here. Arguments win over the
// environment (PSD2_BASE_URL, PSD2_CERT, PSD2_KEY), which wins over the defaults below (the
// profile's files). Needs Node 18 or newer: built-in crypto and fetch, nothing to install.

import { createHash, createPrivateKey, createSign, randomUUID, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const BASE_URL = @@BASE_URL@@;
const CERT_FILE = @@CERT_FILE@@;
const KEY_FILE = @@KEY_FILE@@;

const METHOD = @@METHOD@@;
const PATH = @@PATH@@;
// The request's own headers. Date, X-Request-ID, Digest, TPP-Signature-Certificate and
// Signature are made below, on every run.
const HEADERS = [
@@HEADERS@@
];
// The body bytes exactly as sent: the Digest covers these bytes.
const BODY = @@BODY@@;
// Whether the profile signs (request-target) too: lower-case method, space, path and query.
const SIGN_REQUEST_TARGET = @@REQUEST_TARGET@@;

// Authentication rule 6: the headers that are signed when present, in this order.
const SIGNED_WHEN_PRESENT = ["date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"];

function readKey(path) {
  // PKCS#8 or PKCS#1, PEM or DER.
  const data = readFileSync(path);
  if (data.toString("latin1").trimStart().startsWith("-----BEGIN")) return createPrivateKey(data);
  try {
    return createPrivateKey({ key: data, format: "der", type: "pkcs8" });
  } catch {
    return createPrivateKey({ key: data, format: "der", type: "pkcs1" });
  }
}

function sign(cert, key, headers) {
  // Rule 4: Date, now, as an RFC 7231 IMF-fixdate (the bank allows 60 s of difference).
  headers.push(["Date", new Date().toUTCString()]);
  // A new X-Request-ID (a UUID) for every request.
  headers.push(["X-Request-ID", randomUUID()]);
  // Rule 9: Digest, SHA-256 over the exact body bytes, base64; only with a body.
  if (BODY.length > 0) {
    headers.push(["Digest", "SHA-256=" + createHash("sha256").update(BODY).digest("base64")]);
  }

  // Rule 7: the signing string, one "<lower-case name>: <value>" line per signed header,
  // joined by "\n", in the order of rule 6 (the first header of a name counts).
  const present = new Map();
  for (const [name, value] of headers) {
    if (!present.has(name.toLowerCase())) present.set(name.toLowerCase(), value.trim());
  }
  const names = (SIGN_REQUEST_TARGET ? ["(request-target)"] : []).concat(
    SIGNED_WHEN_PRESENT.filter((n) => present.has(n)),
  );
  const signingString = names
    .map((n) => n + ": " + (n === "(request-target)" ? METHOD.toLowerCase() + " " + PATH : present.get(n)))
    .join("\n");

  // Rule 5: keyId names the certificate: SN=<serial, upper-case hex>,CA=<issuer, RFC 2253>.
  // Node prints the issuer one attribute a line, RFC 2253-escaped, first to last; RFC 2253
  // lists them last to first, joined by commas.
  const serial = cert.serialNumber.toUpperCase().replace(/^0+(?=.)/, "");
  const keyId = "SN=" + serial + ",CA=" + cert.issuer.split("\n").reverse().join(",");
  // Rule 5: algorithm rsa-sha256, i.e. RSASSA-PKCS1-v1_5 with SHA-256 over the signing string.
  const signature = createSign("RSA-SHA256").update(signingString, "utf8").sign(key, "base64");
  let value = `keyId="${keyId}",algorithm="rsa-sha256",headers="${names.join(" ")}",signature="${signature}"`;
  // Rule 8: a value that is not ASCII is sent RFC 2047-encoded, whole: =?utf-8?B?<base64>?=
  if (!/^[\x00-\x7f]*$/.test(value)) {
    value = "=?utf-8?B?" + Buffer.from(value, "utf8").toString("base64") + "?=";
  }
  // TPP-Signature-Certificate: the certificate's DER, base64 on one line.
  headers.push(["TPP-Signature-Certificate", cert.raw.toString("base64")]);
  headers.push(["Signature", value]);
}

async function main() {
  const { values: args } = parseArgs({
    options: {
      "base-url": { type: "string", default: process.env.PSD2_BASE_URL ?? BASE_URL },
      cert: { type: "string", default: process.env.PSD2_CERT ?? CERT_FILE },
      key: { type: "string", default: process.env.PSD2_KEY ?? KEY_FILE },
      "dry-run": { type: "boolean", default: false },
    },
  });
  let cert, key;
  try {
    cert = new X509Certificate(readFileSync(args.cert));
    key = readKey(args.key);
  } catch (e) {
    console.error(`cannot read the certificate or key: ${e.message}`);
    return 1;
  }
  const headers = HEADERS.map(([n, v]) => [n, v]);
  sign(cert, key, headers);
  const url = args["base-url"].replace(/\/+$/, "") + PATH;

  if (args["dry-run"]) {
    console.log(`${METHOD} ${url}`);
    for (const [name, value] of headers) console.log(`${name}: ${value}`);
    console.log();
    process.stdout.write(BODY);
    return 0;
  }

  let response;
  try {
    response = await fetch(url, {
      method: METHOD,
      headers,
      body: BODY.length > 0 ? BODY : undefined,
      redirect: "manual",
    });
  } catch (e) {
    console.error(`cannot send to ${url}: ${e.cause?.message ?? e.message}`);
    return 1;
  }
  console.log(`HTTP ${response.status}`);
  for (const [name, value] of response.headers) console.log(`${name}: ${value}`);
  console.log();
  process.stdout.write(Buffer.from(await response.arrayBuffer()));
  return response.status >= 200 && response.status < 300 ? 0 : 1;
}

process.exitCode = await main();
