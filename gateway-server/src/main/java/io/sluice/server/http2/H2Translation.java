package io.sluice.server.http2;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.AsciiString;
import io.sluice.codec.http.HttpHead;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * HTTP/2 ↔ HTTP/1.1 message translation (RFC 9113 §8): an h2 request's header list becomes an
 * HTTP/1.1 request head for the upstream; an HTTP/1.1 response head becomes an h2 header list.
 * Connection-specific fields never cross (the HPACK decoder already refuses them in requests);
 * {@code Host} comes from {@code :authority}; {@code cookie} fields are joined with "; ".
 */
final class H2Translation {

    private static final byte[] HTTP11 = " HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] COLON = {':', ' '};

    private H2Translation() {
    }

    /** A field value that must not go into an HTTP/1.1 head: NUL, CR, LF or another control character except HTAB. */
    static boolean badValue(CharSequence v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7F || c > 0xFF) {
                return true;
            }
        }
        return false;
    }

    /** A field name that is not a lower-case token (RFC 9110 §5.1, RFC 9113 §8.2). */
    static boolean badName(CharSequence n) {
        if (n.length() == 0) {
            return true;
        }
        for (int i = 0; i < n.length(); i++) {
            char c = n.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return true;
            }
        }
        return false;
    }

    /**
     * The first problem with the request's regular fields for an HTTP/1.1 hop, or null: a name that
     * is not a lower-case token, a value with a control character, a connection-specific field.
     */
    static String check(Http2Headers h) {
        for (Map.Entry<CharSequence, CharSequence> e : h) {
            CharSequence n = e.getKey();
            if (n.length() > 0 && n.charAt(0) == ':') {
                continue;
            }
            if (badName(n)) {
                return "malformed header name " + n;
            }
            if (badValue(e.getValue())) {
                return "control character in header " + n;
            }
            if (connectionSpecific(n) || (AsciiString.contentEquals("te", n) && !AsciiString.contentEqualsIgnoreCase("trailers", e.getValue()))) {
                return "connection-specific header " + n + " in an HTTP/2 request";
            }
        }
        return null;
    }

    static boolean connectionSpecific(CharSequence n) {
        return AsciiString.contentEquals("connection", n) || AsciiString.contentEquals("keep-alive", n)
                || AsciiString.contentEquals("proxy-connection", n) || AsciiString.contentEquals("transfer-encoding", n)
                || AsciiString.contentEquals("upgrade", n) || AsciiString.contentEquals("http2-settings", n);
    }

    /**
     * The HTTP/1.1 request head for {@code h}.
     *
     * @param target       origin-form target (normalized path and query) to send
     * @param host         the Host value
     * @param chunked      the body (of unknown length) goes chunked
     * @param clientIp     with X-Forwarded-* on: the client's address (null: off)
     * @param trusted      the client is a trusted proxy: its X-Forwarded-* are kept and appended to
     * @param authority    the request's authority (X-Forwarded-Host)
     */
    static ByteBuf requestHead(ByteBufAllocator alloc, CharSequence method, String target, String host, Http2Headers h,
                               boolean chunked, String clientIp, boolean trusted, String authority) {
        ByteBuf b = alloc.buffer(256);
        b.writeCharSequence(method, StandardCharsets.ISO_8859_1);
        b.writeByte(' ');
        b.writeCharSequence(target, StandardCharsets.ISO_8859_1);
        b.writeBytes(HTTP11);
        field(b, "Host", host);
        StringBuilder cookie = null;
        String xff = null;
        boolean xfp = false;
        boolean xfh = false;
        boolean replace = clientIp != null && !trusted;
        for (Map.Entry<CharSequence, CharSequence> e : h) {
            CharSequence n = e.getKey();
            if (n.length() == 0 || n.charAt(0) == ':' || connectionSpecific(n) || AsciiString.contentEquals("host", n)
                    || AsciiString.contentEquals("te", n) || AsciiString.contentEquals("expect", n)) {
                continue; // expect: answered by the gateway itself
            }
            if (AsciiString.contentEquals("cookie", n)) {
                cookie = cookie == null ? new StringBuilder(e.getValue()) : cookie.append("; ").append(e.getValue());
                continue;
            }
            if (clientIp != null) {
                if (AsciiString.contentEquals("x-forwarded-for", n)) {
                    if (!replace) {
                        xff = xff == null ? e.getValue().toString() : xff + ", " + e.getValue();
                    }
                    continue;
                }
                if (AsciiString.contentEquals("x-forwarded-proto", n)) {
                    xfp |= !replace;
                    if (replace) {
                        continue;
                    }
                } else if (AsciiString.contentEquals("x-forwarded-host", n)) {
                    xfh |= !replace;
                    if (replace) {
                        continue;
                    }
                } else if (replace && AsciiString.contentEquals("forwarded", n)) {
                    continue;
                }
            }
            field(b, n, e.getValue());
        }
        if (cookie != null) {
            field(b, "cookie", cookie);
        }
        if (clientIp != null) {
            field(b, "X-Forwarded-For", xff == null ? clientIp : xff + ", " + clientIp);
            if (!xfp) {
                field(b, "X-Forwarded-Proto", "http");
            }
            if (!xfh && authority != null) {
                field(b, "X-Forwarded-Host", authority);
            }
        }
        if (chunked) {
            field(b, "Transfer-Encoding", "chunked");
        }
        b.writeBytes(CRLF);
        return b;
    }

    private static void field(ByteBuf b, CharSequence name, CharSequence value) {
        b.writeCharSequence(name, StandardCharsets.ISO_8859_1);
        b.writeBytes(COLON);
        b.writeCharSequence(value, StandardCharsets.ISO_8859_1);
        b.writeBytes(CRLF);
    }

    /** Chunked trailer section for request trailers: {@code 0 CRLF fields CRLF}. */
    static ByteBuf trailerSection(ByteBufAllocator alloc, Http2Headers trailers) {
        ByteBuf b = alloc.buffer(64);
        b.writeByte('0');
        b.writeBytes(CRLF);
        for (Map.Entry<CharSequence, CharSequence> e : trailers) {
            CharSequence n = e.getKey();
            if (n.length() == 0 || n.charAt(0) == ':' || connectionSpecific(n) || AsciiString.contentEquals("te", n)
                    || AsciiString.contentEquals("content-length", n) || AsciiString.contentEquals("host", n)) {
                continue;
            }
            field(b, n, e.getValue());
        }
        b.writeBytes(CRLF);
        return b;
    }

    /**
     * Response field names most servers send, lower case: the h2 header list takes these
     * constants instead of a copy of the name (issue #21: the translation made a String, its
     * lower-case copy and an AsciiString copy for every name and value, ~1.1 KiB per response).
     */
    private static final AsciiString[] KNOWN_NAMES = {
        AsciiString.cached("server"), AsciiString.cached("date"), AsciiString.cached("content-type"),
        AsciiString.cached("content-length"), AsciiString.cached("last-modified"), AsciiString.cached("etag"),
        AsciiString.cached("cache-control"), AsciiString.cached("vary"), AsciiString.cached("accept-ranges"),
        AsciiString.cached("expires"), AsciiString.cached("location"), AsciiString.cached("set-cookie"),
        AsciiString.cached("content-encoding"), AsciiString.cached("grpc-status"), AsciiString.cached("grpc-message"),
    };

    /** The h2 response header list for an HTTP/1.1 response head: {@code :status} first, connection-specific fields dropped. */
    static Http2Headers responseHeaders(HttpHead resp) {
        Http2Headers out = new DefaultHttp2Headers(false, resp.headerCount() + 1);
        out.status(io.netty.handler.codec.http.HttpResponseStatus.valueOf(resp.status()).codeAsText()); // cached for known codes
        String nominated = resp.connectionNamesOthers() ? connectionTokens(resp) : null;
        ByteBuf raw = resp.raw();
        int base = raw.readerIndex();
        for (int i = 0; i < resp.headerCount(); i++) {
            byte kind = resp.kind(i);
            if (kind == HttpHead.CONNECTION || kind == HttpHead.TRANSFER_ENCODING || kind == HttpHead.HOP) {
                continue;
            }
            AsciiString name = lowerName(raw, base + resp.nameStart(i), resp.nameEnd(i) - resp.nameStart(i));
            if (nominated != null && nominated.contains("," + name + ",")) {
                continue;
            }
            byte[] value = new byte[resp.valueEnd(i) - resp.valueStart(i)];
            raw.getBytes(base + resp.valueStart(i), value);
            out.add(name, new AsciiString(value, false));
        }
        return out;
    }

    /** The field name at {@code raw[at, at + len)} in lower case: a known constant, or one copy. */
    static AsciiString lowerName(ByteBuf raw, int at, int len) {
        for (AsciiString k : KNOWN_NAMES) {
            if (k.length() == len && sameLower(raw, at, k)) {
                return k;
            }
        }
        byte[] b = new byte[len];
        raw.getBytes(at, b);
        for (int j = 0; j < len; j++) {
            if (b[j] >= 'A' && b[j] <= 'Z') {
                b[j] += 'a' - 'A';
            }
        }
        return new AsciiString(b, false);
    }

    private static boolean sameLower(ByteBuf raw, int at, AsciiString lower) {
        for (int j = 0; j < lower.length(); j++) {
            byte c = raw.getByte(at + j);
            if (c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            }
            if (c != lower.byteAt(j)) {
                return false;
            }
        }
        return true;
    }

    /** ",token,token," of every Connection header (lower case). */
    private static String connectionTokens(HttpHead resp) {
        StringBuilder sb = new StringBuilder(",");
        for (int i = 0; i < resp.headerCount(); i++) {
            if (resp.kind(i) == HttpHead.CONNECTION) {
                for (String t : resp.value(i).split(",")) {
                    sb.append(t.trim().toLowerCase(java.util.Locale.ROOT)).append(',');
                }
            }
        }
        return sb.toString();
    }
}
