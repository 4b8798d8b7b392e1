// @@TITLE@@
//
// Exported by psd2-console. This program rebuilds the request and signs it afresh every time
// it runs, as the interface document's Authentication rules 4-9 say; it sends it, prints the
// status, the response headers and the body, and exits 0 for a 2xx answer, 1 otherwise.
//
//	go run main.go [--base-url URL] [--cert FILE] [--key FILE] [--dry-run]
//
// The certificate and key are read from files, never written here. Arguments win over the
// environment (PSD2_BASE_URL, PSD2_CERT, PSD2_KEY), which wins over the defaults below (the
// profile's files). Needs Go's standard library only.
package main

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
)

const baseURL = @@BASE_URL@@
const certFile = @@CERT_FILE@@
const keyFile = @@KEY_FILE@@

const method = @@METHOD@@
const path = @@PATH@@

// The request's own headers. Date, X-Request-ID, Digest, TPP-Signature-Certificate and
// Signature are made below, on every run.
var requestHeaders = [][2]string{
@@HEADERS@@
}

// The body bytes exactly as sent: the Digest covers these bytes.
var body = []byte(@@BODY@@)

// Whether the profile signs (request-target) too: lower-case method, space, path and query.
const signRequestTarget = @@REQUEST_TARGET@@

// Authentication rule 6: the headers that are signed when present, in this order.
var signedWhenPresent = []string{"date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"}

// Attribute type names for the issuer in the keyId (RFC 2253 section 2.3 and the names
// OpenSSL prints); any other type is written as its dotted OID.
var dnNames = map[string]string{
@@DN_NAMES@@
}

// RFC 2253 section 2.4: a backslash before , + " \ < > ; anywhere, before # or a space at
// the start and before a space at the end.
func rfc2253Escape(value string) string {
	runes := []rune(value)
	var out strings.Builder
	for i, c := range runes {
		if strings.ContainsRune(",+\"\\<>;", c) || (i == 0 && (c == '#' || c == ' ')) || (i == len(runes)-1 && c == ' ') {
			out.WriteByte('\\')
		}
		out.WriteRune(c)
	}
	return out.String()
}

func issuerRFC2253(cert *x509.Certificate) (string, error) {
	var rdns pkix.RDNSequence
	if _, err := asn1.Unmarshal(cert.RawIssuer, &rdns); err != nil {
		return "", err
	}
	var attributes []pkix.AttributeTypeAndValue
	for _, rdn := range rdns {
		attributes = append(attributes, rdn...)
	}
	// RFC 2253 section 2.1: the attributes from the last of the DER sequence to the first.
	var parts []string
	for i := len(attributes) - 1; i >= 0; i-- {
		a := attributes[i]
		oid := a.Type.String()
		name, ok := dnNames[oid]
		if !ok {
			name = oid
		}
		var value string
		if s, ok := a.Value.(string); ok {
			value = rfc2253Escape(s)
		} else {
			der, err := asn1.Marshal(a.Value)
			if err != nil {
				return "", err
			}
			value = "#" + strings.ToUpper(hex.EncodeToString(der))
		}
		parts = append(parts, name+"="+value)
	}
	return strings.Join(parts, ","), nil
}

func readCertificate(file string) (*x509.Certificate, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if block, _ := pem.Decode(data); block != nil {
		data = block.Bytes
	}
	return x509.ParseCertificate(data)
}

func readKey(file string) (*rsa.PrivateKey, error) {
	// PKCS#8 or PKCS#1, PEM or DER.
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if block, _ := pem.Decode(data); block != nil {
		data = block.Bytes
	}
	if key, err := x509.ParsePKCS1PrivateKey(data); err == nil {
		return key, nil
	}
	key, err := x509.ParsePKCS8PrivateKey(data)
	if err != nil {
		return nil, err
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("the key is not an RSA key")
	}
	return rsaKey, nil
}

func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func sign(cert *x509.Certificate, key *rsa.PrivateKey, headers [][2]string) ([][2]string, error) {
	// Rule 4: Date, now, as an RFC 7231 IMF-fixdate (the bank allows 60 s of difference).
	headers = append(headers, [2]string{"Date", time.Now().UTC().Format(http.TimeFormat)})
	// A new X-Request-ID (a UUID) for every request.
	headers = append(headers, [2]string{"X-Request-ID", newUUID()})
	// Rule 9: Digest, SHA-256 over the exact body bytes, base64; only with a body.
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		headers = append(headers, [2]string{"Digest", "SHA-256=" + base64.StdEncoding.EncodeToString(sum[:])})
	}

	// Rule 7: the signing string, one "<lower-case name>: <value>" line per signed header,
	// joined by "\n", in the order of rule 6 (the first header of a name counts).
	present := map[string]string{}
	for _, h := range headers {
		name := strings.ToLower(h[0])
		if _, seen := present[name]; !seen {
			present[name] = strings.TrimSpace(h[1])
		}
	}
	var names []string
	if signRequestTarget {
		names = append(names, "(request-target)")
	}
	for _, n := range signedWhenPresent {
		if _, ok := present[n]; ok {
			names = append(names, n)
		}
	}
	var lines []string
	for _, n := range names {
		value := present[n]
		if n == "(request-target)" {
			value = strings.ToLower(method) + " " + path
		}
		lines = append(lines, n+": "+value)
	}
	signingString := strings.Join(lines, "\n")

	// Rule 5: keyId names the certificate: SN=<serial, upper-case hex>,CA=<issuer, RFC 2253>.
	issuer, err := issuerRFC2253(cert)
	if err != nil {
		return nil, err
	}
	keyID := "SN=" + strings.ToUpper(cert.SerialNumber.Text(16)) + ",CA=" + issuer
	// Rule 5: algorithm rsa-sha256, i.e. RSASSA-PKCS1-v1_5 with SHA-256 over the signing string.
	digest := sha256.Sum256([]byte(signingString))
	signature, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		return nil, err
	}
	value := fmt.Sprintf("keyId=\"%s\",algorithm=\"rsa-sha256\",headers=\"%s\",signature=\"%s\"",
		keyID, strings.Join(names, " "), base64.StdEncoding.EncodeToString(signature))
	// Rule 8: a value that is not ASCII is sent RFC 2047-encoded, whole: =?utf-8?B?<base64>?=
	for _, c := range []byte(value) {
		if c >= 0x80 {
			value = "=?utf-8?B?" + base64.StdEncoding.EncodeToString([]byte(value)) + "?="
			break
		}
	}
	// TPP-Signature-Certificate: the certificate's DER, base64 on one line.
	headers = append(headers, [2]string{"TPP-Signature-Certificate", base64.StdEncoding.EncodeToString(cert.Raw)})
	headers = append(headers, [2]string{"Signature", value})
	return headers, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return fallback
}

func main() {
	base := flag.String("base-url", envOr("PSD2_BASE_URL", baseURL), "base URL of the bank")
	certPath := flag.String("cert", envOr("PSD2_CERT", certFile), "certificate file (PEM or DER)")
	keyPath := flag.String("key", envOr("PSD2_KEY", keyFile), "private key file (PKCS#8 or PKCS#1, PEM or DER)")
	dryRun := flag.Bool("dry-run", false, "print the signed request, do not send it")
	flag.Parse()

	cert, err := readCertificate(*certPath)
	if err != nil {
		fail("cannot read the certificate %s: %v", *certPath, err)
	}
	key, err := readKey(*keyPath)
	if err != nil {
		fail("cannot read the key %s: %v", *keyPath, err)
	}
	headers, err := sign(cert, key, append([][2]string{}, requestHeaders...))
	if err != nil {
		fail("cannot sign: %v", err)
	}
	url := strings.TrimRight(*base, "/") + path

	if *dryRun {
		fmt.Println(method + " " + url)
		for _, h := range headers {
			fmt.Println(h[0] + ": " + h[1])
		}
		fmt.Println()
		os.Stdout.Write(body)
		return
	}

	request, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		fail("cannot build the request: %v", err)
	}
	for _, h := range headers {
		request.Header.Add(h[0], h[1])
	}
	client := &http.Client{
		Timeout: 30 * time.Second,
		// Show a redirect as it is, do not follow it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	response, err := client.Do(request)
	if err != nil {
		fail("cannot send to %s: %v", url, err)
	}
	defer response.Body.Close()
	fmt.Printf("HTTP %d\n", response.StatusCode)
	names := make([]string, 0, len(response.Header))
	for name := range response.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range response.Header[name] {
			fmt.Printf("%s: %s\n", name, v)
		}
	}
	fmt.Println()
	if _, err := io.Copy(os.Stdout, response.Body); err != nil {
		fail("cannot read the body: %v", err)
	}
	if response.StatusCode < 200 || response.StatusCode > 299 {
		os.Exit(1)
	}
}
