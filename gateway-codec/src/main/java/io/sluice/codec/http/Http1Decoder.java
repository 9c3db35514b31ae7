package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.FastThreadLocal;

import java.util.List;

/**
 * A forwarding HTTP/1.x decoder for a proxy. It emits, in order, for each message:
 * <ul>
 *   <li>one {@link HttpHead}: a retained slice of the head bytes with an index of its parts, and the
 *       facts a proxy needs (framing, keep-alive, hop-by-hop headers, Host, Expect, X-Forwarded-*);</li>
 *   <li>then, unless the head says {@link HttpHead#isComplete()}, {@link HttpBody} pieces, retained
 *       slices of the input, the last one flagged: chunked bodies keep their chunk framing (so they
 *       are forwarded byte for byte) unless {@link #dechunk(boolean)} was set;</li>
 *   <li>or, once, an {@link HttpDecodeError} when the input is not acceptable HTTP/1.x, after which
 *       everything is discarded.</li>
 * </ul>
 * Bodies are never copied and no header becomes a {@code String}; a complete head is copied once
 * into a per-thread scratch array to be parsed (array reads instead of a bounds-checked call per
 * byte), and what is emitted is a slice of the input. Parsing is strict where request
 * smuggling lives: no whitespace before a colon, no obsolete line folding, no control characters,
 * a single valid Content-Length, Transfer-Encoding ending in {@code chunked} and never together with
 * Content-Length in a request, no Transfer-Encoding in HTTP/1.0. Heads are scanned incrementally, so
 * a head arriving a byte at a time costs linear, not quadratic, work.
 *
 * <p>One message is emitted per {@code decode} call, so the handler after this one sees a head
 * before its body is decoded and can switch {@link #dechunk(boolean)} in time.
 */
public final class Http1Decoder extends ByteToMessageDecoder {

    private static final int HEAD = 0;
    private static final int FIXED = 1;
    private static final int CHUNK_SIZE = 2;
    private static final int CHUNK_DATA = 3;
    private static final int CHUNK_DATA_END = 4;
    private static final int TRAILER = 5;
    private static final int UNTIL_CLOSE = 6;
    private static final int BAD = 7;

    private static final int MAX_CHUNK_LINE = 4096;

    /** Token characters (methods, header names). */
    private static final boolean[] TOKEN = new boolean[256];
    /** Bytes allowed in a field value: anything but controls other than HTAB (obs-text included). */
    private static final boolean[] FIELD = new boolean[256];
    /** Bytes allowed in a request-target: visible ASCII (no controls, space or non-ASCII). */
    private static final boolean[] TARGET = new boolean[256];

    static {
        for (int c = 0; c < 256; c++) {
            TOKEN[c] = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
                    || c < 0x7f && "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            FIELD[c] = (c >= 0x20 || c == 0x09) && c != 0x7f;
            TARGET[c] = c > 0x20 && c < 0x7f;
        }
    }

    /** Largest scratch array kept per thread (bytes). */
    static final int MAX_KEPT_SCRATCH = 64 * 1024;

    /** Per event loop thread: the array a complete head is copied into to be parsed (grown as needed). */
    private static final FastThreadLocal<byte[][]> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected byte[][] initialValue() {
            return new byte[][] {new byte[1024]};
        }
    };

    private final boolean requests;
    private final int maxInitialLineLength;
    private final int maxHeaderSize;

    private int state = HEAD;
    /** Head scanning: offset from the reader index of the next line to look at. */
    private int scanned;
    private boolean firstLineSeen;
    /** Length of the start line with its line break, once seen. */
    private int firstLineLength;
    private long remaining;
    private int trailerBytes;
    private boolean dechunk;
    private boolean bodylessResponse;
    /** Header count of the previous head (at least 2): the size of the next head's index. */
    private int headerHint = 8;

    private Http1Decoder(boolean requests, int maxInitialLineLength, int maxHeaderSize) {
        this.requests = requests;
        this.maxInitialLineLength = maxInitialLineLength;
        this.maxHeaderSize = maxHeaderSize;
    }

    /** Decodes requests (the server side of a connection). */
    public static Http1Decoder requests(int maxInitialLineLength, int maxHeaderSize) {
        return new Http1Decoder(true, maxInitialLineLength, maxHeaderSize);
    }

    /** Decodes responses (the client side of a connection). */
    public static Http1Decoder responses(int maxInitialLineLength, int maxHeaderSize) {
        return new Http1Decoder(false, maxInitialLineLength, maxHeaderSize);
    }

    /** Emit only the data of chunked bodies (from the next body piece on), not the chunk framing. */
    public void dechunk(boolean on) {
        this.dechunk = on;
    }

    /** The next response answers a HEAD request: it has no body whatever its headers say. */
    public void expectBodylessResponse(boolean on) {
        this.bodylessResponse = on;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        switch (state) {
            case HEAD -> decodeHead(in, out);
            case FIXED -> {
                int n = (int) Math.min(remaining, in.readableBytes());
                remaining -= n;
                boolean last = remaining == 0;
                if (last) {
                    state = HEAD;
                }
                out.add(new HttpBody(in.readRetainedSlice(n), last, n));
            }
            case UNTIL_CLOSE -> {
                int n = in.readableBytes();
                out.add(new HttpBody(in.readRetainedSlice(n), false, n));
            }
            case BAD -> in.skipBytes(in.readableBytes());
            default -> {
                if (dechunk) {
                    decodeChunkedData(in, out);
                } else {
                    decodeChunkedRaw(in, out);
                }
            }
        }
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (state == UNTIL_CLOSE) {
            int n = in.readableBytes();
            state = HEAD;
            out.add(new HttpBody(n == 0 ? Unpooled.EMPTY_BUFFER : in.readRetainedSlice(n), true, n));
        } else if (in.isReadable()) {
            in.skipBytes(in.readableBytes()); // a truncated message: the handler sees the close
        }
    }

    // ------------------------------------------------------------------ head

    private void decodeHead(ByteBuf in, List<Object> out) {
        int ri = in.readerIndex();
        int wi = in.writerIndex();
        int pos = ri + scanned;
        while (true) {
            int lf = in.indexOf(pos, wi, (byte) '\n');
            if (lf < 0) {
                scanned = pos - ri;
                int have = wi - ri;
                if (!firstLineSeen && have > maxInitialLineLength) {
                    fail(in, out, requests ? 414 : 502, (requests ? "request" : "status") + " line longer than "
                            + maxInitialLineLength + " bytes");
                } else if (firstLineSeen && have - firstLineLength > maxHeaderSize) {
                    fail(in, out, requests ? 431 : 502, (requests ? "request" : "response") + " headers exceed "
                            + maxHeaderSize + " bytes");
                }
                return;
            }
            int lineLen = lf - pos - (lf > pos && in.getByte(lf - 1) == '\r' ? 1 : 0);
            if (!firstLineSeen) {
                if (lineLen == 0 && pos == ri) {
                    in.readerIndex(lf + 1); // an empty line before a request line is ignored (RFC 9112 §2.2)
                    ri = lf + 1;
                    pos = ri;
                    continue;
                }
                if (lf - ri > maxInitialLineLength) {
                    fail(in, out, requests ? 414 : 502, (requests ? "request" : "status") + " line longer than "
                            + maxInitialLineLength + " bytes");
                    return;
                }
                firstLineSeen = true;
                firstLineLength = lf + 1 - ri;
            } else if (lineLen == 0) {
                int headLen = lf + 1 - ri;
                scanned = 0;
                firstLineSeen = false;
                if (headLen - firstLineLength > maxHeaderSize) {
                    fail(in, out, requests ? 431 : 502, (requests ? "request" : "response") + " headers exceed "
                            + maxHeaderSize + " bytes");
                    return;
                }
                parseHead(in, ri, headLen, out);
                return;
            }
            pos = lf + 1;
        }
    }

    /**
     * Parses a complete head of {@code len} bytes at {@code ri}; emits it (or an error). The head is
     * copied once into this event loop's scratch array and parsed there: plain array reads instead
     * of a bounds-checked {@code getByte} (or a {@code ByteProcessor} call) per byte. Only the index
     * comes out of it; the emitted head is a slice of {@code in}.
     */
    private void parseHead(ByteBuf in, int ri, int len, List<Object> out) {
        byte[] h = scratch(len);
        in.getBytes(ri, h, 0, len);
        int end = len;
        int lf = indexOf(h, 0, end, (byte) '\n');
        int lineEnd = lf > 0 && h[lf - 1] == '\r' ? lf - 1 : lf;
        String method = null;
        int targetStart = 0;
        int targetEnd = 0;
        int status = 0;
        boolean http10;
        if (requests) {
            int sp1 = indexOf(h, 0, lineEnd, (byte) ' ');
            if (sp1 <= 0) {
                fail(in, out, 400, "malformed request line");
                return;
            }
            int sp2 = indexOf(h, sp1 + 1, lineEnd, (byte) ' ');
            if (sp2 < 0 || sp2 == sp1 + 1) {
                fail(in, out, 400, "malformed request line");
                return;
            }
            if (firstNot(h, 0, sp1, TOKEN) >= 0) {
                fail(in, out, 400, "invalid character in method");
                return;
            }
            if (firstNot(h, sp1 + 1, sp2, TARGET) >= 0) {
                fail(in, out, 400, "invalid character in request target");
                return;
            }
            int v = version(h, sp2 + 1, lineEnd);
            if (v < 0) {
                if (v == -2) {
                    fail(in, out, 505, "unsupported HTTP version " + text(h, sp2 + 1, lineEnd));
                } else {
                    fail(in, out, 400, "malformed request line");
                }
                return;
            }
            http10 = v == 0;
            method = method(h, 0, sp1);
            targetStart = sp1 + 1;
            targetEnd = sp2;
        } else {
            int sp1 = indexOf(h, 0, lineEnd, (byte) ' ');
            int v = sp1 < 0 ? -1 : version(h, 0, sp1);
            if (v < 0 || lineEnd - sp1 < 4 || (lineEnd - sp1 > 4 && h[sp1 + 4] != ' ')) {
                fail(in, out, 502, "malformed status line");
                return;
            }
            http10 = v == 0;
            int d0 = h[sp1 + 1] - '0';
            int d1 = h[sp1 + 2] - '0';
            int d2 = h[sp1 + 3] - '0';
            if (d0 < 1 || d0 > 5 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) {
                fail(in, out, 502, "malformed status code");
                return;
            }
            status = d0 * 100 + d1 * 10 + d2;
        }

        // sized like the previous head on this connection: a keep-alive connection repeats its shape
        int[] offsets = new int[headerHint * 4];
        byte[] kinds = new byte[headerHint];
        int count = 0;
        long contentLength = -1;
        boolean transferEncoding = false;
        boolean chunked = false;
        boolean close = false;
        boolean keepAlive = false;
        boolean namesOthers = false;
        boolean expect = false;
        boolean hop = false;
        int hosts = 0;

        // a line ended by a bare LF is accepted but not passed on as is: forwarded heads end lines in CRLF
        boolean bareLf = lineEnd == lf;
        int ls = lf + 1;
        while (true) {
            int nl = indexOf(h, ls, end, (byte) '\n');
            int le = nl > ls && h[nl - 1] == '\r' ? nl - 1 : nl;
            bareLf |= le == nl;
            if (le == ls) {
                break; // the empty line ending the head
            }
            byte first = h[ls];
            if (first == ' ' || first == '\t') {
                fail(in, out, requests ? 400 : 502, "obsolete line folding in header section");
                return;
            }
            int colon = firstNot(h, ls, le, TOKEN);
            if (colon < 0 || h[colon] != ':' || colon == ls) {
                fail(in, out, requests ? 400 : 502, colon >= 0 && isOws(h[colon])
                        ? "whitespace between header name and colon" : "malformed header line");
                return;
            }
            int vs = skipOws(h, colon + 1, le);
            int ve = trimOwsEnd(h, vs, le);
            if (firstNot(h, vs, ve, FIELD) >= 0) {
                fail(in, out, requests ? 400 : 502, "control character in value of header " + text(h, ls, colon));
                return;
            }
            if (count == kinds.length) {
                kinds = java.util.Arrays.copyOf(kinds, count * 2);
                offsets = java.util.Arrays.copyOf(offsets, count * 8);
            }
            byte kind = classify(h, ls, colon - ls);
            switch (kind) {
                case HttpHead.HOST -> hosts++;
                case HttpHead.CONTENT_LENGTH -> {
                    long cl = contentLength(h, vs, ve);
                    if (cl < 0 || (contentLength >= 0 && cl != contentLength)) {
                        fail(in, out, requests ? 400 : 502, "invalid Content-Length: " + text(h, vs, ve));
                        return;
                    }
                    contentLength = cl;
                }
                case HttpHead.TRANSFER_ENCODING -> {
                    transferEncoding = true;
                    int c = lastTokenIsChunked(h, vs, ve);
                    if (c <= 0 && requests) {
                        fail(in, out, 400, "Transfer-Encoding must end with chunked: " + text(h, vs, ve));
                        return;
                    }
                    chunked = c > 0; // a response not ending in chunked is close-delimited
                }
                case HttpHead.CONNECTION -> {
                    hop = true;
                    int flags = connectionTokens(h, vs, ve);
                    close |= (flags & 1) != 0;
                    keepAlive |= (flags & 2) != 0;
                    namesOthers |= (flags & 4) != 0;
                }
                case HttpHead.HOP -> hop = true;
                case HttpHead.EXPECT -> expect |= requests && ve - vs == 12 && equalsLower(h, vs, "100-continue");
                default -> {
                }
            }
            int o = count * 4;
            offsets[o] = ls;
            offsets[o + 1] = colon;
            offsets[o + 2] = vs;
            offsets[o + 3] = ve;
            kinds[count++] = kind;
            ls = nl + 1;
        }

        headerHint = Math.max(2, count);
        boolean complete;
        boolean closeDelimited = false;
        if (requests) {
            if (hosts > 1) {
                fail(in, out, 400, "more than one Host header");
                return;
            }
            if (transferEncoding && http10) {
                fail(in, out, 400, "Transfer-Encoding in an HTTP/1.0 request");
                return;
            }
            if (transferEncoding && contentLength >= 0) {
                fail(in, out, 400, "both Content-Length and Transfer-Encoding");
                return;
            }
            complete = !chunked && contentLength <= 0;
        } else if (status < 200 || status == 204 || status == 304 || bodylessResponse) {
            complete = true;
        } else if (transferEncoding) {
            if (contentLength >= 0) {
                hop = true; // Transfer-Encoding overrides Content-Length, which must not be forwarded
                for (int i = 0; i < count; i++) {
                    if (kinds[i] == HttpHead.CONTENT_LENGTH) {
                        kinds[i] = HttpHead.HOP;
                    }
                }
                contentLength = -1;
            }
            complete = false;
            closeDelimited = !chunked;
        } else if (contentLength >= 0) {
            complete = contentLength == 0;
        } else {
            complete = false;
            closeDelimited = true;
        }

        HttpHead head = new HttpHead(in.retainedSlice(ri, len), requests, method, targetStart, targetEnd, status,
                http10, lineEnd, offsets, kinds, count, contentLength, chunked, close, keepAlive, namesOthers,
                expect, hop || bareLf, complete, closeDelimited);
        in.readerIndex(ri + len);
        if (!complete) {
            if (closeDelimited) {
                state = UNTIL_CLOSE;
            } else if (chunked) {
                state = CHUNK_SIZE;
            } else {
                state = FIXED;
                remaining = contentLength;
            }
        }
        out.add(head);
    }

    /**
     * This event loop's scratch array for heads, at least {@code len} bytes long. It grows up to
     * {@link #MAX_KEPT_SCRATCH}; a rarer, larger head (the limits allow up to 2 MiB) gets an array
     * of its own, so one huge head does not pin that much memory per thread for good.
     */
    private static byte[] scratch(int len) {
        if (len > MAX_KEPT_SCRATCH) {
            return new byte[len];
        }
        byte[][] holder = SCRATCH.get();
        byte[] h = holder[0];
        if (h.length < len) {
            h = new byte[Math.min(MAX_KEPT_SCRATCH, Math.max(len, h.length * 2))];
            holder[0] = h;
        }
        return h;
    }

    private static int indexOf(byte[] h, int from, int to, byte b) {
        for (int i = from; i < to; i++) {
            if (h[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /** The first index in {@code [from, to)} whose byte is not allowed by {@code allowed}, or -1. */
    private static int firstNot(byte[] h, int from, int to, boolean[] allowed) {
        for (int i = from; i < to; i++) {
            if (!allowed[h[i] & 0xff]) {
                return i;
            }
        }
        return -1;
    }

    private static String text(byte[] h, int from, int to) {
        return new String(h, from, to - from, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private static boolean isOws(byte b) {
        return b == ' ' || b == '\t';
    }

    /** 1 for HTTP/1.1 (or 1.x), 0 for HTTP/1.0, -2 for another HTTP version, -1 for garbage. */
    private static int version(byte[] h, int start, int end) {
        if (end - start != 8 || h[start] != 'H' || h[start + 1] != 'T' || h[start + 2] != 'T'
                || h[start + 3] != 'P' || h[start + 4] != '/' || h[start + 6] != '.') {
            return -1;
        }
        int major = h[start + 5] - '0';
        int minor = h[start + 7] - '0';
        if (major < 0 || major > 9 || minor < 0 || minor > 9) {
            return -1;
        }
        if (major != 1) {
            return -2;
        }
        return minor == 0 ? 0 : 1;
    }

    /** The standard methods, most frequent first: a request naming one gets this constant, not a new String. */
    private static final String[] KNOWN_METHODS = {"GET", "POST", "PUT", "HEAD", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"};

    private static String method(byte[] h, int start, int len) {
        for (String m : KNOWN_METHODS) {
            if (m.length() == len && matches(h, start, m)) {
                return m;
            }
        }
        return text(h, start, start + len);
    }

    private static boolean matches(byte[] h, int start, String s) {
        for (int i = 0; i < s.length(); i++) {
            if (h[start + i] != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Compares ignoring ASCII case; {@code lower} is lower case. */
    private static boolean equalsLower(byte[] h, int start, String lower) {
        for (int i = 0; i < lower.length(); i++) {
            if ((h[start + i] | 0x20) != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static byte classify(byte[] h, int start, int len) {
        int c = h[start] | 0x20;
        switch (len) {
            case 2:
                return c == 't' && equalsLower(h, start, "te") ? HttpHead.HOP : HttpHead.OTHER;
            case 4:
                return c == 'h' && equalsLower(h, start, "host") ? HttpHead.HOST : HttpHead.OTHER;
            case 6:
                return c == 'e' && equalsLower(h, start, "expect") ? HttpHead.EXPECT : HttpHead.OTHER;
            case 7:
                return (c == 't' && equalsLower(h, start, "trailer")) || (c == 'u' && equalsLower(h, start, "upgrade"))
                        ? HttpHead.HOP : HttpHead.OTHER;
            case 10:
                if (c == 'c' && equalsLower(h, start, "connection")) {
                    return HttpHead.CONNECTION;
                }
                return c == 'k' && equalsLower(h, start, "keep-alive") ? HttpHead.HOP : HttpHead.OTHER;
            case 14:
                return c == 'c' && equalsLower(h, start, "content-length") ? HttpHead.CONTENT_LENGTH : HttpHead.OTHER;
            case 15:
                return c == 'x' && equalsLower(h, start, "x-forwarded-for") ? HttpHead.X_FORWARDED_FOR : HttpHead.OTHER;
            case 16:
                if (c == 'p' && equalsLower(h, start, "proxy-connection")) {
                    return HttpHead.HOP;
                }
                return c == 'x' && equalsLower(h, start, "x-forwarded-host") ? HttpHead.X_FORWARDED_HOST : HttpHead.OTHER;
            case 17:
                if (c == 't' && equalsLower(h, start, "transfer-encoding")) {
                    return HttpHead.TRANSFER_ENCODING;
                }
                return c == 'x' && equalsLower(h, start, "x-forwarded-proto") ? HttpHead.X_FORWARDED_PROTO : HttpHead.OTHER;
            case 18:
                return c == 'p' && equalsLower(h, start, "proxy-authenticate") ? HttpHead.HOP : HttpHead.OTHER;
            case 19:
                return c == 'p' && equalsLower(h, start, "proxy-authorization") ? HttpHead.HOP : HttpHead.OTHER;
            default:
                return HttpHead.OTHER;
        }
    }

    /** A Content-Length value (a list of equal values is accepted), or -1 if invalid. */
    private static long contentLength(byte[] h, int start, int end) {
        long result = -1;
        long value = -1;
        for (int i = start; i <= end; i++) {
            byte b = i < end ? h[i] : (byte) ',';
            if (b >= '0' && b <= '9') {
                if (value < 0) {
                    value = 0;
                }
                if (value > (Long.MAX_VALUE - 9) / 10) {
                    return -1;
                }
                value = value * 10 + (b - '0');
            } else if (b == ',') {
                if (value < 0 || (result >= 0 && result != value)) {
                    return -1;
                }
                result = value;
                value = -1;
            } else if (!isOws(b) || (value >= 0 && i + 1 < end && nextIsDigit(h, i, end))) {
                return -1;
            }
        }
        return result;
    }

    private static boolean nextIsDigit(byte[] h, int i, int end) {
        int j = skipOws(h, i + 1, end);
        return j < end && h[j] >= '0' && h[j] <= '9';
    }

    /** The first index in {@code [from, to)} that is not optional whitespace, or {@code to}. */
    private static int skipOws(byte[] h, int from, int to) {
        while (from < to && isOws(h[from])) {
            from++;
        }
        return from;
    }

    /** The end of {@code [from, to)} without its trailing optional whitespace. */
    private static int trimOwsEnd(byte[] h, int from, int to) {
        while (to > from && isOws(h[to - 1])) {
            to--;
        }
        return to;
    }

    /** The end of the comma-separated list element starting at {@code from} (its comma, or {@code end}). */
    private static int elementEnd(byte[] h, int from, int end) {
        int comma = indexOf(h, from, end, (byte) ',');
        return comma < 0 ? end : comma;
    }

    /** 1 if the last coding is chunked, 0 if not, -1 if chunked appears before the end. */
    private static int lastTokenIsChunked(byte[] h, int start, int end) {
        int result = 0;
        for (int ts = start; ts <= end; ) {
            int te = elementEnd(h, ts, end);
            int s = skipOws(h, ts, te);
            int e = trimOwsEnd(h, s, te);
            if (e > s) {
                if (result > 0) {
                    return -1; // something after chunked
                }
                result = e - s == 7 && equalsLower(h, s, "chunked") ? 1 : 0;
            }
            ts = te + 1;
        }
        return result;
    }

    /** Bits: 1 close, 2 keep-alive, 4 another token (a header to treat as hop-by-hop). */
    private static int connectionTokens(byte[] h, int start, int end) {
        int flags = 0;
        for (int ts = start; ts <= end; ) {
            int te = elementEnd(h, ts, end);
            int s = skipOws(h, ts, te);
            int e = trimOwsEnd(h, s, te);
            if (e - s == 5 && equalsLower(h, s, "close")) {
                flags |= 1;
            } else if (e - s == 10 && equalsLower(h, s, "keep-alive")) {
                flags |= 2;
            } else if (e > s) {
                flags |= 4;
            }
            ts = te + 1;
        }
        return flags;
    }

    // ------------------------------------------------------------------ chunked bodies

    /** Passes chunked bytes on as they are, as far as they go; the last piece ends with the trailer. */
    private void decodeChunkedRaw(ByteBuf in, List<Object> out) {
        int ri = in.readerIndex();
        int wi = in.writerIndex();
        int p = ri;
        long payload = 0;
        boolean done = false;
        loop:
        while (p < wi) {
            switch (state) {
                case CHUNK_SIZE -> {
                    int lf = in.indexOf(p, wi, (byte) '\n');
                    if (lf < 0) {
                        if (wi - p > MAX_CHUNK_LINE) {
                            failBody(in, out, "chunk size line too long");
                            return;
                        }
                        break loop;
                    }
                    long size = chunkSize(in, p, lf);
                    if (size < 0) {
                        failBody(in, out, "malformed chunk size");
                        return;
                    }
                    p = lf + 1;
                    if (size == 0) {
                        state = TRAILER;
                        trailerBytes = 0;
                    } else {
                        state = CHUNK_DATA;
                        remaining = size;
                    }
                }
                case CHUNK_DATA -> {
                    int n = (int) Math.min(remaining, wi - p);
                    p += n;
                    payload += n;
                    remaining -= n;
                    if (remaining > 0) {
                        break loop;
                    }
                    state = CHUNK_DATA_END;
                }
                case CHUNK_DATA_END -> {
                    int k = chunkEnd(in, p, wi);
                    if (k == 0) {
                        break loop;
                    }
                    if (k < 0) {
                        failBody(in, out, "missing line break after chunk data");
                        return;
                    }
                    p += k;
                    state = CHUNK_SIZE;
                }
                case TRAILER -> {
                    int lf = in.indexOf(p, wi, (byte) '\n');
                    if (lf < 0) {
                        if (trailerBytes + (wi - p) > maxHeaderSize) {
                            failBody(in, out, "trailer section too long");
                            return;
                        }
                        break loop;
                    }
                    int lineLen = lf - p - (lf > p && in.getByte(lf - 1) == '\r' ? 1 : 0);
                    trailerBytes += lf + 1 - p;
                    p = lf + 1;
                    if (lineLen == 0) {
                        state = HEAD;
                        done = true;
                        break loop;
                    }
                    if (trailerBytes > maxHeaderSize) {
                        failBody(in, out, "trailer section too long");
                        return;
                    }
                }
                default -> throw new IllegalStateException("state " + state);
            }
        }
        if (p > ri) {
            out.add(new HttpBody(in.readRetainedSlice(p - ri), done, (int) payload));
        }
    }

    /** Emits chunk data only (for a receiver that cannot take chunked framing). */
    private void decodeChunkedData(ByteBuf in, List<Object> out) {
        while (in.isReadable()) {
            int ri = in.readerIndex();
            int wi = in.writerIndex();
            switch (state) {
                case CHUNK_SIZE -> {
                    int lf = in.indexOf(ri, wi, (byte) '\n');
                    if (lf < 0) {
                        if (wi - ri > MAX_CHUNK_LINE) {
                            failBody(in, out, "chunk size line too long");
                        }
                        return;
                    }
                    long size = chunkSize(in, ri, lf);
                    if (size < 0) {
                        failBody(in, out, "malformed chunk size");
                        return;
                    }
                    in.readerIndex(lf + 1);
                    if (size == 0) {
                        state = TRAILER;
                        trailerBytes = 0;
                    } else {
                        state = CHUNK_DATA;
                        remaining = size;
                    }
                }
                case CHUNK_DATA -> {
                    int n = (int) Math.min(remaining, in.readableBytes());
                    remaining -= n;
                    if (remaining == 0) {
                        state = CHUNK_DATA_END;
                    }
                    out.add(new HttpBody(in.readRetainedSlice(n), false, n));
                    return;
                }
                case CHUNK_DATA_END -> {
                    int k = chunkEnd(in, ri, wi);
                    if (k == 0) {
                        return;
                    }
                    if (k < 0) {
                        failBody(in, out, "missing line break after chunk data");
                        return;
                    }
                    in.skipBytes(k);
                    state = CHUNK_SIZE;
                }
                case TRAILER -> {
                    int lf = in.indexOf(ri, wi, (byte) '\n');
                    if (lf < 0) {
                        if (trailerBytes + (wi - ri) > maxHeaderSize) {
                            failBody(in, out, "trailer section too long");
                        }
                        return;
                    }
                    int lineLen = lf - ri - (lf > ri && in.getByte(lf - 1) == '\r' ? 1 : 0);
                    trailerBytes += lf + 1 - ri;
                    in.readerIndex(lf + 1);
                    if (lineLen == 0) {
                        state = HEAD;
                        out.add(new HttpBody(Unpooled.EMPTY_BUFFER, true, 0));
                        return;
                    }
                    if (trailerBytes > maxHeaderSize) {
                        failBody(in, out, "trailer section too long");
                        return;
                    }
                }
                default -> throw new IllegalStateException("state " + state);
            }
        }
    }

    /** Bytes of the line break after chunk data (1 or 2), 0 if not all here yet, -1 if something else. */
    private static int chunkEnd(ByteBuf in, int p, int wi) {
        byte b = in.getByte(p);
        if (b == '\n') {
            return 1;
        }
        if (b != '\r') {
            return -1;
        }
        if (p + 1 >= wi) {
            return 0;
        }
        return in.getByte(p + 1) == '\n' ? 2 : -1;
    }

    /** The hex size of a chunk-size line ending at {@code lf} (extensions ignored), or -1. */
    private static long chunkSize(ByteBuf in, int start, int lf) {
        long size = 0;
        int digits = 0;
        int i = start;
        for (; i < lf; i++) {
            int b = in.getByte(i);
            int d;
            if (b >= '0' && b <= '9') {
                d = b - '0';
            } else if ((b | 0x20) >= 'a' && (b | 0x20) <= 'f') {
                d = (b | 0x20) - 'a' + 10;
            } else {
                break;
            }
            if (++digits > 15) {
                return -1;
            }
            size = size << 4 | d;
        }
        if (digits == 0) {
            return -1;
        }
        for (; i < lf; i++) {
            byte b = in.getByte(i);
            if (b == ';') {
                break; // extensions: not interpreted, forwarded as they are
            }
            if (b == '\r' && i == lf - 1) {
                break;
            }
            if (!isOws(b)) {
                return -1;
            }
        }
        return size;
    }

    // ------------------------------------------------------------------ errors

    private void fail(ByteBuf in, List<Object> out, int status, String reason) {
        state = BAD;
        in.skipBytes(in.readableBytes());
        out.add(new HttpDecodeError(status, reason));
    }

    private void failBody(ByteBuf in, List<Object> out, String reason) {
        fail(in, out, requests ? 400 : 502, reason);
    }

    // ------------------------------------------------------------------ connection reuse

    /**
     * Bytes received but not decoded yet. Read right after a message completes, anything here is
     * beyond that message: a proxy must not reuse the connection (those bytes would be read as
     * the next response). A field read, no allocation.
     */
    public int bufferedBytes() {
        return internalBuffer().readableBytes();
    }
}
