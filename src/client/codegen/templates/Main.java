// @@TITLE@@
//
// Exported by psd2-console. This program rebuilds the request and signs it afresh every time
// it runs, as the interface document's Authentication rules 4-9 say; it sends it, prints the
// status, the response headers and the body, and exits 0 for a 2xx answer, 1 otherwise.
//
//   java Main.java [--base-url URL] [--cert FILE] [--key FILE] [--dry-run]
//
// The certificate and key are read from files, never written here. Arguments win over the
// environment (PSD2_BASE_URL, PSD2_CERT, PSD2_KEY), which wins over the defaults below (the
// profile's files). Needs Java 17 or newer (java.net.http, java.security), nothing else.

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.security.auth.x500.X500Principal;

public class Main {
    static final String BASE_URL = @@BASE_URL@@;
    static final String CERT_FILE = @@CERT_FILE@@;
    static final String KEY_FILE = @@KEY_FILE@@;

    static final String METHOD = @@METHOD@@;
    static final String PATH = @@PATH@@;
    // The request's own headers. Date, X-Request-ID, Digest, TPP-Signature-Certificate and
    // Signature are made below, on every run.
    static final String[][] HEADERS = {
@@HEADERS@@
    };
    // The body bytes exactly as sent: the Digest covers these bytes.
    static final byte[] BODY = @@BODY@@;
    // Whether the profile signs (request-target) too: lower-case method, space, path and query.
    static final boolean SIGN_REQUEST_TARGET = @@REQUEST_TARGET@@;

    // Authentication rule 6: the headers that are signed when present, in this order.
    static final String[] SIGNED_WHEN_PRESENT = {"date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri"};

    // Attribute type names for the issuer in the keyId (RFC 2253 section 2.3 and the names
    // OpenSSL prints); any other type is written as its dotted OID.
    static final Map<String, String> DN_NAMES = Map.ofEntries(
@@DN_NAMES@@
    );

    // RFC 2253 section 2.4: a backslash before , + " \ < > ; anywhere, before # or a space at
    // the start and before a space at the end.
    static String rfc2253Escape(String value) {
        StringBuilder out = new StringBuilder();
        int[] cps = value.codePoints().toArray();
        for (int i = 0; i < cps.length; i++) {
            int c = cps[i];
            if (",+\"\\<>;".indexOf(c) >= 0 || (i == 0 && (c == '#' || c == ' ')) || (i == cps.length - 1 && c == ' ')) {
                out.append('\\');
            }
            out.appendCodePoint(c);
        }
        return out.toString();
    }

    static String issuerRfc2253(X509Certificate cert) throws Exception {
        // Java prints RFC 2253 itself; parsed back, each attribute is written as the console
        // does. getRdns() lists the DER sequence first to last; RFC 2253 lists it last to first.
        String name = cert.getIssuerX500Principal().getName(X500Principal.RFC2253, DN_NAMES);
        List<Rdn> rdns = new LdapName(name).getRdns();
        List<String> parts = new ArrayList<>();
        for (int i = rdns.size() - 1; i >= 0; i--) {
            Rdn rdn = rdns.get(i);
            Object value = rdn.getValue();
            String text = value instanceof String s ? rfc2253Escape(s) : "#" + hex((byte[]) value);
            String type = rdn.getType();
            parts.add(DN_NAMES.getOrDefault(type, type) + "=" + text);
        }
        return String.join(",", parts);
    }

    static String hex(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        for (byte b : bytes) out.append(String.format("%02X", b));
        return out.toString();
    }

    static PrivateKey readKey(String path) throws Exception {
        // PKCS#8 or PKCS#1, PEM or DER. Java reads PKCS#8 only, so a PKCS#1 key
        // (-----BEGIN RSA PRIVATE KEY-----) is wrapped in a PKCS#8 PrivateKeyInfo first.
        byte[] data = Files.readAllBytes(Path.of(path));
        String text = new String(data, StandardCharsets.ISO_8859_1);
        boolean pkcs1 = text.contains("-----BEGIN RSA PRIVATE KEY-----");
        if (text.contains("-----BEGIN")) {
            String b64 = text.replaceAll("-----[^-]+-----", "").replaceAll("\\s", "");
            data = Base64.getDecoder().decode(b64);
        }
        KeyFactory rsa = KeyFactory.getInstance("RSA");
        if (pkcs1) return rsa.generatePrivate(new PKCS8EncodedKeySpec(pkcs1ToPkcs8(data)));
        try {
            return rsa.generatePrivate(new PKCS8EncodedKeySpec(data));
        } catch (java.security.spec.InvalidKeySpecException e) {
            return rsa.generatePrivate(new PKCS8EncodedKeySpec(pkcs1ToPkcs8(data)));
        }
    }

    // PrivateKeyInfo (RFC 5208): SEQUENCE { INTEGER 0, SEQUENCE { rsaEncryption, NULL }, OCTET STRING pkcs1 }.
    static byte[] pkcs1ToPkcs8(byte[] pkcs1) throws IOException {
        byte[] versionAndAlgorithm = {
            0x02, 0x01, 0x00,
            0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
        };
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        content.write(versionAndAlgorithm);
        content.write(der(0x04, pkcs1));
        return der(0x30, content.toByteArray());
    }

    static byte[] der(int tag, byte[] content) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int n = content.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) out.write((n >> (8 * i)) & 0xff);
        }
        out.write(content);
        return out.toByteArray();
    }

    static void sign(X509Certificate cert, PrivateKey key, List<String[]> headers) throws Exception {
        // Rule 4: Date, now, as an RFC 7231 IMF-fixdate (the bank allows 60 s of difference).
        DateTimeFormatter imfFixdate = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);
        headers.add(new String[] {"Date", imfFixdate.format(ZonedDateTime.now(ZoneOffset.UTC))});
        // A new X-Request-ID (a UUID) for every request.
        headers.add(new String[] {"X-Request-ID", UUID.randomUUID().toString()});
        // Rule 9: Digest, SHA-256 over the exact body bytes, base64; only with a body.
        if (BODY.length > 0) {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(BODY);
            headers.add(new String[] {"Digest", "SHA-256=" + Base64.getEncoder().encodeToString(sha)});
        }

        // Rule 7: the signing string, one "<lower-case name>: <value>" line per signed header,
        // joined by "\n", in the order of rule 6 (the first header of a name counts).
        Map<String, String> present = new LinkedHashMap<>();
        for (String[] h : headers) present.putIfAbsent(h[0].toLowerCase(Locale.ROOT), h[1].strip());
        List<String> names = new ArrayList<>();
        if (SIGN_REQUEST_TARGET) names.add("(request-target)");
        for (String n : SIGNED_WHEN_PRESENT) if (present.containsKey(n)) names.add(n);
        List<String> lines = new ArrayList<>();
        for (String n : names) {
            String value = n.equals("(request-target)") ? METHOD.toLowerCase(Locale.ROOT) + " " + PATH : present.get(n);
            lines.add(n + ": " + value);
        }
        String signingString = String.join("\n", lines);

        // Rule 5: keyId names the certificate: SN=<serial, upper-case hex>,CA=<issuer, RFC 2253>.
        String keyId = "SN=" + cert.getSerialNumber().toString(16).toUpperCase(Locale.ROOT) + ",CA=" + issuerRfc2253(cert);
        // Rule 5: algorithm rsa-sha256, i.e. RSASSA-PKCS1-v1_5 with SHA-256 over the signing string.
        Signature rsa = Signature.getInstance("SHA256withRSA");
        rsa.initSign(key);
        rsa.update(signingString.getBytes(StandardCharsets.UTF_8));
        String signature = Base64.getEncoder().encodeToString(rsa.sign());
        String value = "keyId=\"" + keyId + "\",algorithm=\"rsa-sha256\",headers=\"" + String.join(" ", names) + "\",signature=\"" + signature + "\"";
        // Rule 8: a value that is not ASCII is sent RFC 2047-encoded, whole: =?utf-8?B?<base64>?=
        if (!StandardCharsets.US_ASCII.newEncoder().canEncode(value)) {
            value = "=?utf-8?B?" + Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8)) + "?=";
        }
        // TPP-Signature-Certificate: the certificate's DER, base64 on one line.
        headers.add(new String[] {"TPP-Signature-Certificate", Base64.getEncoder().encodeToString(cert.getEncoded())});
        headers.add(new String[] {"Signature", value});
    }

    public static void main(String[] argv) throws Exception {
        String baseUrl = System.getenv().getOrDefault("PSD2_BASE_URL", BASE_URL);
        String certFile = System.getenv().getOrDefault("PSD2_CERT", CERT_FILE);
        String keyFile = System.getenv().getOrDefault("PSD2_KEY", KEY_FILE);
        boolean dryRun = false;
        for (int i = 0; i < argv.length; i++) {
            switch (argv[i]) {
                case "--base-url" -> baseUrl = argv[++i];
                case "--cert" -> certFile = argv[++i];
                case "--key" -> keyFile = argv[++i];
                case "--dry-run" -> dryRun = true;
                default -> {
                    System.err.println("usage: java Main.java [--base-url URL] [--cert FILE] [--key FILE] [--dry-run]");
                    System.exit(2);
                }
            }
        }
        X509Certificate cert;
        PrivateKey key;
        try {
            byte[] certBytes = Files.readAllBytes(Path.of(certFile));
            cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(certBytes));
            key = readKey(keyFile);
        } catch (Exception e) {
            System.err.println("cannot read the certificate or key: " + e);
            System.exit(1);
            return;
        }
        List<String[]> headers = new ArrayList<>();
        for (String[] h : HEADERS) headers.add(h.clone());
        sign(cert, key, headers);
        String url = baseUrl.replaceAll("/+$", "") + PATH;

        if (dryRun) {
            System.out.println(METHOD + " " + url);
            for (String[] h : headers) System.out.println(h[0] + ": " + h[1]);
            System.out.println();
            System.out.flush();
            System.out.write(BODY);
            System.out.flush();
            return;
        }

        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        for (String[] h : headers) request.header(h[0], h[1]);
        request.method(METHOD, BODY.length > 0 ? HttpRequest.BodyPublishers.ofByteArray(BODY) : HttpRequest.BodyPublishers.noBody());
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<byte[]> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            System.err.println("cannot send to " + url + ": " + e);
            System.exit(1);
            return;
        }
        System.out.println("HTTP " + response.statusCode());
        response.headers().map().forEach((name, values) -> {
            for (String v : values) System.out.println(name + ": " + v);
        });
        System.out.println();
        System.out.flush();
        System.out.write(response.body());
        System.out.flush();
        System.exit(response.statusCode() >= 200 && response.statusCode() < 300 ? 0 : 1);
    }
}
