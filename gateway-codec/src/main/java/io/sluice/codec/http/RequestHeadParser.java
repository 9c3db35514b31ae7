package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;

import static io.sluice.codec.http.HttpChars.TARGET;
import static io.sluice.codec.http.HttpChars.TOKEN;
import static io.sluice.codec.http.HttpChars.equalsLower;
import static io.sluice.codec.http.HttpChars.firstNot;
import static io.sluice.codec.http.HttpChars.indexOf;
import static io.sluice.codec.http.HttpChars.matches;
import static io.sluice.codec.http.HttpChars.shown;
import static io.sluice.codec.http.HttpChars.skipOws;
import static io.sluice.codec.http.HttpChars.text;
import static io.sluice.codec.http.HttpChars.trimOwsEnd;

/**
 * The request side of {@link HeadParser} (RFC 9112 §3): the request line, the four forms of
 * request-target, the path normalized for routing, Host, and the request framing rules that keep
 * every hop reading the same message boundaries:
 * <ul>
 *   <li>exactly one Host, an RFC 3986 authority; an absolute-form target must carry a valid
 *       {@code http}/{@code https} authority without userinfo (it wins over Host, §3.2.2);</li>
 *   <li>{@code CONNECT} is answered 405 (the gateway tunnels nothing); asterisk-form only with OPTIONS;</li>
 *   <li>at most one Content-Length line with one plain number; at most one Transfer-Encoding line,
 *       exactly {@code chunked} (a coding before it: 501; not ending in chunked, empty list
 *       elements: 400), never with Content-Length, never in HTTP/1.0;</li>
 *   <li>a framing line not written {@code Name: value} is forwarded in that canonical form.</li>
 * </ul>
 */
final class RequestHeadParser extends HeadParser {

    private static final int R_METHOD = START_LINE;
    private static final int R_TARGET_FIRST = START_LINE + 1;
    private static final int R_TARGET = START_LINE + 2;
    private static final int R_VERSION = START_LINE + 3;
    private static final int R_VERSION_CR = START_LINE + 4;

    /** Longest method accepted (the registered ones have at most 17 characters). */
    static final int MAX_METHOD_LENGTH = 32;

    /** The standard methods, most frequent first: a request naming one gets this constant, not a new String. */
    private static final String[] KNOWN_METHODS = {"GET", "POST", "PUT", "HEAD", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"};

    private final PathNormalizer.EscapedSlashes escapedSlashes;
    private final boolean mergeSlashes;

    // the request line of the head being parsed
    private String method;
    private int targetStart;
    private int targetEnd;
    private boolean http10;
    private byte form;
    private int authorityStart;
    private int authorityEnd;
    private int pathStart;
    private int pathEnd;
    private String normalizedPath;

    RequestHeadParser(Http1DecoderConfig config) {
        super(config.maxInitialLineLength(), config.maxHeaderSize());
        this.escapedSlashes = config.escapedSlashes();
        this.mergeSlashes = config.mergeSlashes();
    }

    @Override
    int badStatus() {
        return 400;
    }

    @Override
    int lineTooLongStatus() {
        return 414;
    }

    @Override
    int headersTooLargeStatus() {
        return 431;
    }

    @Override
    String lineName() {
        return "request line";
    }

    @Override
    String messageName() {
        return "request";
    }

    @Override
    int lexStartLine(byte b) {
        int c = b & 0xff;
        switch (lexState) {
            case L_START, R_METHOD -> {
                if (lexState == L_START) {
                    lexCount = 0;
                }
                if (TOKEN[c]) {
                    return ++lexCount > MAX_METHOD_LENGTH
                            ? fail("method longer than " + MAX_METHOD_LENGTH + " characters") : R_METHOD;
                }
                if (b == ' ' && lexCount > 0) {
                    return R_TARGET_FIRST;
                }
                return fail(b == ' ' ? "malformed request line" : "invalid character in method");
            }
            case R_TARGET_FIRST -> {
                if (b == '/' || b == '*' || b == '[' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
                    return R_TARGET;
                }
                return fail(b == ' ' ? "malformed request line" : "invalid character in request target");
            }
            case R_TARGET -> {
                if (b == '#') {
                    return fail("fragment in request target");
                }
                if (TARGET[c]) {
                    return R_TARGET;
                }
                if (b == ' ') {
                    lexCount = 0;
                    return R_VERSION;
                }
                return fail("invalid character in request target");
            }
            case R_VERSION -> {
                if (lexCount < 8) {
                    if (versionByte(lexCount, b)) {
                        lexCount++;
                        return R_VERSION;
                    }
                    return fail("malformed request line");
                }
                return b == '\r' ? R_VERSION_CR : b == '\n' ? L_LINE_START : fail("malformed request line");
            }
            case R_VERSION_CR -> {
                return b == '\n' ? L_LINE_START : fail("bare CR in request line");
            }
            default -> throw new IllegalStateException("lexer state " + lexState);
        }
    }

    @Override
    HttpDecodeError parseStartLine(byte[] h, int lineEnd) {
        int sp1 = indexOf(h, 0, lineEnd, (byte) ' ');
        if (sp1 <= 0) {
            return error("malformed request line");
        }
        int sp2 = indexOf(h, sp1 + 1, lineEnd, (byte) ' ');
        if (sp2 < 0 || sp2 == sp1 + 1) {
            return error("malformed request line");
        }
        if (firstNot(h, 0, sp1, TOKEN) >= 0) {
            return error("invalid character in method");
        }
        if (sp1 > MAX_METHOD_LENGTH) {
            return error("method longer than " + MAX_METHOD_LENGTH + " characters");
        }
        if (firstNot(h, sp1 + 1, sp2, TARGET) >= 0) {
            return error("invalid character in request target");
        }
        int v = version(h, sp2 + 1, lineEnd);
        if (v < 0) {
            return v == -2 ? new HttpDecodeError(505, "unsupported HTTP version " + shown(h, sp2 + 1, lineEnd))
                    : error("malformed request line");
        }
        http10 = v == 0;
        method = method(h, 0, sp1);
        targetStart = sp1 + 1;
        targetEnd = sp2;
        return parseTarget(h, targetStart, targetEnd);
    }

    /** RFC 9112 §3.2: which form the target has, its authority, and its path (normalized). */
    private HttpDecodeError parseTarget(byte[] h, int ts, int te) {
        //noinspection StringEquality: method() returns the interned constant for CONNECT
        if (method == "CONNECT") {
            return new HttpDecodeError(405, "CONNECT is not supported: the gateway does not open tunnels");
        }
        if (indexOf(h, ts, te, (byte) '#') >= 0) {
            return error("fragment in request target");
        }
        authorityStart = -1;
        authorityEnd = -1;
        normalizedPath = null;
        byte first = h[ts];
        if (first == '/') {
            form = HttpHead.ORIGIN_FORM;
            pathStart = ts;
        } else if (first == '*') {
            //noinspection StringEquality
            if (te - ts != 1 || method != "OPTIONS") {
                return error("asterisk-form request target is only allowed with OPTIONS");
            }
            form = HttpHead.ASTERISK_FORM;
            pathStart = ts;
            pathEnd = te;
            return null;
        } else {
            int schemeEnd = ts;
            while (schemeEnd < te && (TOKEN[h[schemeEnd] & 0xff] && h[schemeEnd] != '%')) {
                schemeEnd++;
            }
            if (schemeEnd + 2 >= te || h[schemeEnd] != ':' || h[schemeEnd + 1] != '/' || h[schemeEnd + 2] != '/') {
                return error("request target must be an absolute path or an http(s) URL: " + shown(h, ts, te));
            }
            int sl = schemeEnd - ts;
            if (!(sl == 4 && equalsLower(h, ts, "http") || sl == 5 && equalsLower(h, ts, "https"))) {
                return error("unsupported scheme in request target: " + shown(h, ts, schemeEnd));
            }
            int as = schemeEnd + 3;
            int ae = as;
            while (ae < te && h[ae] != '/' && h[ae] != '?') {
                ae++;
            }
            if (ae == as) {
                return error("absolute-form request target without a host");
            }
            if (indexOf(h, as, ae, (byte) '@') >= 0) {
                return error("userinfo in request target");
            }
            if (!HttpChars.isAuthority(h, as, ae)) {
                return error("invalid authority in request target: " + shown(h, as, ae));
            }
            form = HttpHead.ABSOLUTE_FORM;
            authorityStart = as;
            authorityEnd = ae;
            pathStart = ae;
        }
        int q = indexOf(h, pathStart, te, (byte) '?');
        pathEnd = q < 0 ? te : q;
        if (pathStart == pathEnd) {
            normalizedPath = "/"; // http://host or http://host?query
            return null;
        }
        int c = PathNormalizer.check(h, pathStart, pathEnd, escapedSlashes, mergeSlashes);
        if (c < 0) {
            return error(PathNormalizer.reason(c));
        }
        if (c == PathNormalizer.CHANGES) {
            normalizedPath = PathNormalizer.normalize(h, pathStart, pathEnd, escapedSlashes, mergeSlashes);
        }
        return null;
    }

    @Override
    Object finish(ByteBuf in, int ri, int len, byte[] h, int lineEnd) {
        if (hosts > 1) {
            return error("more than one Host header");
        }
        if (hostIndex >= 0) {
            int vs = offsets[hostIndex * 4 + 2];
            int ve = offsets[hostIndex * 4 + 3];
            if (!HttpChars.isAuthority(h, vs, ve)) {
                return error("invalid Host header: " + shown(h, vs, ve));
            }
        }
        if (contentLengthLines > 1) {
            return error("more than one Content-Length header");
        }
        if (contentLengthList) {
            return error("invalid Content-Length: " + shown(h, offsets[contentLengthIndex() * 4 + 2],
                    offsets[contentLengthIndex() * 4 + 3]));
        }
        boolean chunked = false;
        boolean framingRewrite = !contentLengthCanonical;
        if (transferEncodingLines > 0) {
            if (http10) {
                return error("Transfer-Encoding in an HTTP/1.0 request");
            }
            if (transferEncodingLines > 1) {
                return error("more than one Transfer-Encoding header");
            }
            if (contentLength >= 0) {
                return error("both Content-Length and Transfer-Encoding");
            }
            HttpDecodeError e = checkTransferEncoding(h, teStart, teEnd);
            if (e != null) {
                return e;
            }
            chunked = true;
            framingRewrite |= !teCanonicalLine || !matches(h, teStart, "chunked");
        }
        boolean complete = !chunked && contentLength <= 0;
        boolean rebuild = hop || bareLf || framingRewrite || form == HttpHead.ABSOLUTE_FORM || normalizedPath != null;
        return new HttpHead(in.retainedSlice(ri, len), true, method, targetStart, targetEnd, 0, http10, lineEnd,
                offsets, kinds, count, contentLength, chunked, close, keepAlive, namesOthers, expect, rebuild,
                complete, false, form == HttpHead.ORIGIN_FORM && normalizedPath == null ? null
                        : new HttpHead.Target(form, authorityStart, authorityEnd, pathEnd, normalizedPath));
    }

    private int contentLengthIndex() {
        for (int i = 0; i < count; i++) {
            if (kinds[i] == HttpHead.CONTENT_LENGTH) {
                return i;
            }
        }
        return 0;
    }

    /** The only request transfer coding accepted is {@code chunked} alone. */
    private HttpDecodeError checkTransferEncoding(byte[] h, int start, int end) {
        int elements = 0;
        boolean lastChunked = false;
        for (int ts = start; ts <= end; ) {
            int te = elementEnd(h, ts, end);
            int s = skipOws(h, ts, te);
            int e = trimOwsEnd(h, s, te);
            if (e == s) {
                return error("empty element in Transfer-Encoding: " + shown(h, start, end));
            }
            if (lastChunked) {
                return error("Transfer-Encoding must end with chunked: " + shown(h, start, end));
            }
            elements++;
            lastChunked = e - s == 7 && equalsLower(h, s, "chunked");
            ts = te + 1;
        }
        if (!lastChunked) {
            return error("Transfer-Encoding must end with chunked: " + shown(h, start, end));
        }
        if (elements > 1) {
            return new HttpDecodeError(501, "Transfer-Encoding " + shown(h, start, end)
                    + " is not implemented (only chunked is)");
        }
        return null;
    }

    private static String method(byte[] h, int start, int len) {
        for (String m : KNOWN_METHODS) {
            if (m.length() == len && matches(h, start, m)) {
                return m;
            }
        }
        return text(h, start, start + len);
    }
}
