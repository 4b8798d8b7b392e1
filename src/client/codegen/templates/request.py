#!/usr/bin/env python3
# @@TITLE@@
#
# Exported by psd2-console. This program rebuilds the request and signs it afresh every time
# it runs, as the interface document's Authentication rules 4-9 say; it sends it, prints the
# status, the response headers and the body, and exits 0 for a 2xx answer, 1 otherwise.
#
#   python3 request.py [--base-url URL] [--cert FILE] [--key FILE] [--dry-run]
#
# The certificate and key are read from files, never written here. Arguments win over the
# environment (PSD2_BASE_URL, PSD2_CERT, PSD2_KEY), which wins over the defaults below (the
# profile's files). Needs requests and cryptography (Debian: python3-requests
# python3-cryptography; pip: requests cryptography).

import argparse
import base64
import hashlib
import os
import sys
import uuid
from email.utils import formatdate

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

BASE_URL = @@BASE_URL@@
CERT_FILE = @@CERT_FILE@@
KEY_FILE = @@KEY_FILE@@

METHOD = @@METHOD@@
PATH = @@PATH@@
# The request's own headers. Date, X-Request-ID, Digest, TPP-Signature-Certificate and
# Signature are made below, on every run.
HEADERS = [
@@HEADERS@@
]
# The body bytes exactly as sent: the Digest covers these bytes.
BODY = @@BODY@@
# Whether the profile signs (request-target) too: lower-case method, space, path and query.
SIGN_REQUEST_TARGET = @@REQUEST_TARGET@@

# Authentication rule 6: the headers that are signed when present, in this order.
SIGNED_WHEN_PRESENT = ["date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"]

# Attribute type names for the issuer in the keyId (RFC 2253 section 2.3 and the names
# OpenSSL prints); any other type is written as its dotted OID.
DN_NAMES = {
@@DN_NAMES@@
}


def rfc2253_escape(value):
    # RFC 2253 section 2.4: a backslash before , + " \ < > ; anywhere, before # or a space
    # at the start and before a space at the end.
    out = []
    for i, c in enumerate(value):
        if c in ',+"\\<>;' or (i == 0 and c in "# ") or (i == len(value) - 1 and c == " "):
            out.append("\\")
        out.append(c)
    return "".join(out)


def issuer_rfc2253(cert):
    # RFC 2253 section 2.1: the attributes from the last of the DER sequence to the first.
    attributes = [a for rdn in cert.issuer.rdns for a in rdn]
    parts = []
    for a in reversed(attributes):
        oid = a.oid.dotted_string
        if isinstance(a.value, str):
            value = rfc2253_escape(a.value)
        else:
            value = "#" + a.value.hex().upper()
        parts.append(DN_NAMES.get(oid, oid) + "=" + value)
    return ",".join(parts)


def read_certificate(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.lstrip().startswith(b"-----BEGIN"):
        return x509.load_pem_x509_certificate(data)
    return x509.load_der_x509_certificate(data)


def read_key(path):
    # PKCS#8 or PKCS#1, PEM or DER.
    with open(path, "rb") as f:
        data = f.read()
    if data.lstrip().startswith(b"-----BEGIN"):
        return serialization.load_pem_private_key(data, password=None)
    return serialization.load_der_private_key(data, password=None)


def sign(cert, key, headers):
    """Adds Date, X-Request-ID, Digest, TPP-Signature-Certificate and Signature to headers."""
    # Rule 4: Date, now, as an RFC 7231 IMF-fixdate (the bank allows 60 s of difference).
    headers.append(("Date", formatdate(usegmt=True)))
    # A new X-Request-ID (a UUID) for every request.
    headers.append(("X-Request-ID", str(uuid.uuid4())))
    # Rule 9: Digest, SHA-256 over the exact body bytes, base64; only with a body.
    if BODY:
        headers.append(("Digest", "SHA-256=" + base64.b64encode(hashlib.sha256(BODY).digest()).decode()))

    # Rule 7: the signing string, one "<lower-case name>: <value>" line per signed header,
    # joined by "\n", in the order of rule 6 (the first header of a name counts).
    present = {}
    for name, value in headers:
        present.setdefault(name.lower(), value.strip())
    names = (["(request-target)"] if SIGN_REQUEST_TARGET else []) + [n for n in SIGNED_WHEN_PRESENT if n in present]
    lines = []
    for name in names:
        value = METHOD.lower() + " " + PATH if name == "(request-target)" else present[name]
        lines.append(name + ": " + value)
    signing_string = "\n".join(lines)

    # Rule 5: keyId names the certificate: SN=<serial, upper-case hex>,CA=<issuer, RFC 2253>.
    key_id = "SN=%X,CA=%s" % (cert.serial_number, issuer_rfc2253(cert))
    # Rule 5: algorithm rsa-sha256, i.e. RSASSA-PKCS1-v1_5 with SHA-256 over the signing string.
    signature = key.sign(signing_string.encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())
    value = 'keyId="%s",algorithm="rsa-sha256",headers="%s",signature="%s"' % (
        key_id,
        " ".join(names),
        base64.b64encode(signature).decode(),
    )
    # Rule 8: a value that is not ASCII is sent RFC 2047-encoded, whole: =?utf-8?B?<base64>?=
    if not value.isascii():
        value = "=?utf-8?B?" + base64.b64encode(value.encode("utf-8")).decode() + "?="
    # TPP-Signature-Certificate: the certificate's DER, base64 on one line.
    der = cert.public_bytes(serialization.Encoding.DER)
    headers.append(("TPP-Signature-Certificate", base64.b64encode(der).decode()))
    headers.append(("Signature", value))


def main():
    parser = argparse.ArgumentParser(description="Sign and send: " + METHOD + " " + PATH)
    parser.add_argument("--base-url", default=os.environ.get("PSD2_BASE_URL", BASE_URL))
    parser.add_argument("--cert", default=os.environ.get("PSD2_CERT", CERT_FILE))
    parser.add_argument("--key", default=os.environ.get("PSD2_KEY", KEY_FILE))
    parser.add_argument("--dry-run", action="store_true", help="print the signed request, do not send it")
    args = parser.parse_args()

    try:
        cert = read_certificate(args.cert)
        key = read_key(args.key)
    except (OSError, ValueError) as e:
        print("cannot read the certificate or key: %s" % e, file=sys.stderr)
        return 1
    headers = list(HEADERS)
    sign(cert, key, headers)
    url = args.base_url.rstrip("/") + PATH

    if args.dry_run:
        print(METHOD, url)
        for name, value in headers:
            print("%s: %s" % (name, value))
        print()
        sys.stdout.flush()
        sys.stdout.buffer.write(BODY)
        return 0

    try:
        response = requests.request(
            METHOD, url, headers=dict(headers), data=BODY or None, allow_redirects=False, timeout=30
        )
    except requests.RequestException as e:
        print("cannot send to %s: %s" % (url, e), file=sys.stderr)
        return 1
    print("HTTP", response.status_code)
    for name, value in response.headers.items():
        print("%s: %s" % (name, value))
    print()
    sys.stdout.flush()
    sys.stdout.buffer.write(response.content)
    sys.stdout.buffer.flush()
    return 0 if 200 <= response.status_code < 300 else 1


if __name__ == "__main__":
    sys.exit(main())
