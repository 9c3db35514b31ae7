package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;
import io.netty.util.concurrent.FastThreadLocal;

import java.util.Arrays;

import static io.sluice.codec.http.HttpChars.FIELD;
import static io.sluice.codec.http.HttpChars.TOKEN;
import static io.sluice.codec.http.HttpChars.equalsLower;
import static io.sluice.codec.http.HttpChars.firstNot;
import static io.sluice.codec.http.HttpChars.indexOf;
import static io.sluice.codec.http.HttpChars.isOws;
import static io.sluice.codec.http.HttpChars.skipOws;
import static io.sluice.codec.http.HttpChars.trimOwsEnd;

/**
 * The head half of {@link Http1Decoder}: turns the bytes of one head into an {@link HttpHead} (or
 * an {@link HttpDecodeError}), and, while a head is still incomplete, checks the bytes that have
 * arrived so that input that cannot become a head is refused at once rather than at the head
 * timeout. The framing core knows nothing of start lines; a {@link RequestHeadParser} or a
 * {@link ResponseHeadParser} supplies them, the error statuses and the framing rules of its side.
 *
 * <p>One instance per decoder (per connection): it keeps the lexer state of the head in progress
 * and, between {@link #parseStartLine} and {@link #finish}, the facts of the head being parsed.
 */
abstract class HeadParser implements ByteProcessor {

    /** Largest scratch array kept per thread (bytes). */
    static final int MAX_KEPT_SCRATCH = 64 * 1024;

    /** Per event loop thread: the array a complete head is copied into to be parsed (grown as needed). */
    private static final FastThreadLocal<byte[][]> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected byte[][] initialValue() {
            return new byte[][] {new byte[1024]};
        }
    };

    // lexer states shared by both sides; a subclass's start-line states are >= START_LINE
    static final int L_START = 0;
    static final int L_START_CR = 1;
    static final int L_LINE_START = 2;
    static final int L_NAME = 3;
    static final int L_VALUE = 4;
    static final int L_VALUE_CR = 5;
    static final int L_END_CR = 6;
    static final int L_DONE = 7;
    static final int START_LINE = 16;

    final int maxInitialLineLength;
    final int maxHeaderSize;

    /** Lexer: state, a counter for the start-line states, and the reason once it failed. */
    int lexState;
    int lexCount;
    String lexError;

    // the head being parsed (valid from parseStartLine to finish)
    int[] offsets;
    byte[] kinds;
    int count;
    long contentLength;
    int contentLengthLines;
    /** A Content-Length value that is a list, or a line not in the form {@code Content-Length: 123}. */
    boolean contentLengthList;
    boolean contentLengthCanonical;
    int transferEncodingLines;
    /** The value of the last Transfer-Encoding line. */
    int teStart;
    int teEnd;
    boolean teCanonicalLine;
    boolean close;
    boolean keepAlive;
    boolean namesOthers;
    boolean expect;
    boolean hop;
    boolean bareLf;
    int hostIndex;
    int hosts;
    /** Header count of the previous head (at least 2): the size of the next head's index. */
    private int headerHint = 8;

    HeadParser(int maxInitialLineLength, int maxHeaderSize) {
        this.maxInitialLineLength = maxInitialLineLength;
        this.maxHeaderSize = maxHeaderSize;
    }

    // ------------------------------------------------------------------ per side

    /** The status answered for a malformed message (400 for requests, 502 for responses). */
    abstract int badStatus();

    /** The status for a start line longer than the limit. */
    abstract int lineTooLongStatus();

    /** The status for a header or trailer section larger than the limit. */
    abstract int headersTooLargeStatus();

    /** "request line" or "status line". */
    abstract String lineName();

    /** "request" or "response". */
    abstract String messageName();

    /** Lexes one byte of an incomplete start line; returns the next state, or -1 after setting {@link #lexError}. */
    abstract int lexStartLine(byte b);

    /**
     * Parses the start line {@code h[0, lineEnd)} into this parser's per-side fields; returns null,
     * or the error to emit.
     */
    abstract HttpDecodeError parseStartLine(byte[] h, int lineEnd);

    /** Applies this side's framing rules to the parsed headers and builds the head (or the error). */
    abstract Object finish(ByteBuf in, int ri, int len, byte[] h, int lineEnd);

    /** The next response answers a HEAD request (responses only). */
    void expectBodylessResponse(boolean on) {
    }

    // ------------------------------------------------------------------ lexing an incomplete head

    /** Forget the lexer state: a new head starts. */
    final void resetLexer() {
        lexState = L_START;
        lexCount = 0;
        lexError = null;
    }

    final HttpDecodeError lexError() {
        return new HttpDecodeError(badStatus(), lexError);
    }

    final int fail(String reason) {
        lexError = reason;
        return -1;
    }

    /** One byte of an incomplete head; false stops the scan ({@link #lexError} says why, or the head ended). */
    @Override
    public final boolean process(byte b) {
        int s = lexState;
        int next;
        switch (s) {
            case L_START -> next = b == '\r' ? L_START_CR : b == '\n' ? L_START : lexStartLine(b);
            case L_START_CR -> next = b == '\n' ? L_START : fail("bare CR before the " + lineName());
            case L_LINE_START -> {
                if (b == '\r') {
                    next = L_END_CR;
                } else if (b == '\n') {
                    next = L_DONE;
                } else if (isOws(b)) {
                    next = fail("obsolete line folding in header section");
                } else {
                    next = TOKEN[b & 0xff] ? L_NAME : fail("malformed header line");
                }
            }
            case L_NAME -> next = TOKEN[b & 0xff] ? L_NAME : b == ':' ? L_VALUE
                    : fail(isOws(b) ? "whitespace between header name and colon" : "malformed header line");
            case L_VALUE -> next = b == '\r' ? L_VALUE_CR : b == '\n' ? L_LINE_START
                    : FIELD[b & 0xff] ? L_VALUE : fail("control character in header value");
            case L_VALUE_CR -> next = b == '\n' ? L_LINE_START : fail("bare CR in header section");
            case L_END_CR -> next = b == '\n' ? L_DONE : fail("bare CR in header section");
            case L_DONE -> next = L_DONE;
            default -> next = lexStartLine(b);
        }
        if (next < 0) {
            return false;
        }
        lexState = next;
        return next != L_DONE;
    }

    // ------------------------------------------------------------------ parsing a complete head

    /**
     * Parses a complete head of {@code len} bytes at {@code ri}: an {@link HttpHead} (a retained
     * slice of {@code in}) or an {@link HttpDecodeError}. The head is copied once into this event
     * loop's scratch array and parsed there: plain array reads instead of a bounds-checked
     * {@code getByte} (or a {@code ByteProcessor} call) per byte. Only the index comes out of it.
     */
    final Object parse(ByteBuf in, int ri, int len) {
        byte[] h = scratch(len);
        in.getBytes(ri, h, 0, len);
        int lf = indexOf(h, 0, len, (byte) '\n');
        int lineEnd = lf > 0 && h[lf - 1] == '\r' ? lf - 1 : lf;
        HttpDecodeError e = parseStartLine(h, lineEnd);
        if (e != null) {
            return e;
        }
        bareLf = lineEnd == lf;
        e = parseFields(h, lf + 1, len);
        if (e != null) {
            return e;
        }
        headerHint = Math.max(2, count);
        return finish(in, ri, len, h, lineEnd);
    }

    private HttpDecodeError parseFields(byte[] h, int from, int end) {
        // sized like the previous head on this connection: a keep-alive connection repeats its shape
        offsets = new int[headerHint * 4];
        kinds = new byte[headerHint];
        count = 0;
        contentLength = -1;
        contentLengthLines = 0;
        contentLengthList = false;
        contentLengthCanonical = true;
        transferEncodingLines = 0;
        teCanonicalLine = true;
        close = false;
        keepAlive = false;
        namesOthers = false;
        expect = false;
        hop = false;
        hosts = 0;
        hostIndex = -1;
        int ls = from;
        while (true) {
            int nl = indexOf(h, ls, end, (byte) '\n');
            int le = nl > ls && h[nl - 1] == '\r' ? nl - 1 : nl;
            bareLf |= le == nl;
            if (le == ls) {
                return null; // the empty line ending the head
            }
            byte first = h[ls];
            if (first == ' ' || first == '\t') {
                return error("obsolete line folding in header section");
            }
            int colon = firstNot(h, ls, le, TOKEN);
            if (colon < 0 || h[colon] != ':' || colon == ls) {
                return error(colon >= 0 && isOws(h[colon])
                        ? "whitespace between header name and colon" : "malformed header line");
            }
            int vs = skipOws(h, colon + 1, le);
            int ve = trimOwsEnd(h, vs, le);
            if (firstNot(h, vs, ve, FIELD) >= 0) {
                return error("control character in value of header " + HttpChars.text(h, ls, colon));
            }
            if (count == kinds.length) {
                kinds = Arrays.copyOf(kinds, count * 2);
                offsets = Arrays.copyOf(offsets, count * 8);
            }
            boolean canonicalLine = vs == colon + 2 && h[colon + 1] == ' ' && ve == le;
            byte kind = classify(h, ls, colon - ls);
            switch (kind) {
                case HttpHead.HOST -> {
                    hosts++;
                    hostIndex = count;
                }
                case HttpHead.CONTENT_LENGTH -> {
                    contentLengthLines++;
                    long cl = contentLength(h, vs, ve);
                    if (cl < 0 || (contentLength >= 0 && cl != contentLength)) {
                        return error("invalid Content-Length: " + HttpChars.shown(h, vs, ve));
                    }
                    if (firstNot(h, vs, ve, DIGIT) >= 0) {
                        contentLengthList = true;
                    }
                    contentLengthCanonical &= canonicalLine && (h[vs] != '0' || ve - vs == 1);
                    contentLength = cl;
                }
                case HttpHead.TRANSFER_ENCODING -> {
                    transferEncodingLines++;
                    teStart = vs;
                    teEnd = ve;
                    teCanonicalLine = canonicalLine;
                }
                case HttpHead.CONNECTION -> {
                    hop = true;
                    int flags = connectionTokens(h, vs, ve);
                    close |= (flags & 1) != 0;
                    keepAlive |= (flags & 2) != 0;
                    namesOthers |= (flags & 4) != 0;
                }
                case HttpHead.HOP -> hop = true;
                case HttpHead.EXPECT -> expect |= ve - vs == 12 && equalsLower(h, vs, "100-continue");
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
    }

    final HttpDecodeError error(String reason) {
        return new HttpDecodeError(badStatus(), reason);
    }

    private static final boolean[] DIGIT = new boolean[256];

    static {
        for (int c = '0'; c <= '9'; c++) {
            DIGIT[c] = true;
        }
    }

    /**
     * This event loop's scratch array for heads, at least {@code len} bytes long. It grows up to
     * {@link #MAX_KEPT_SCRATCH}; a rarer, larger head (the limits allow up to 2 MiB) gets an array
     * of its own, so one huge head does not pin that much memory per thread for good.
     */
    static byte[] scratch(int len) {
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

    /** 1 for HTTP/1.1 (or 1.x), 0 for HTTP/1.0, -2 for another HTTP version, -1 for garbage. */
    static int version(byte[] h, int start, int end) {
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

    /** Whether {@code b} can stand at {@code pos} of {@code HTTP/d.d}. */
    static boolean versionByte(int pos, byte b) {
        return switch (pos) {
            case 0 -> b == 'H';
            case 1, 2 -> b == 'T';
            case 3 -> b == 'P';
            case 4 -> b == '/';
            case 6 -> b == '.';
            default -> b >= '0' && b <= '9';
        };
    }

    static byte classify(byte[] h, int start, int len) {
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
            case 9:
                return c == 'f' && equalsLower(h, start, "forwarded") ? HttpHead.FORWARDED : HttpHead.OTHER;
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

    /** A Content-Length value (a list of equal values is accepted here), or -1 if invalid. */
    static long contentLength(byte[] h, int start, int end) {
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

    /** The end of the comma-separated list element starting at {@code from} (its comma, or {@code end}). */
    static int elementEnd(byte[] h, int from, int end) {
        int comma = indexOf(h, from, end, (byte) ',');
        return comma < 0 ? end : comma;
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
}
