package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;

import static io.sluice.codec.http.HttpChars.FIELD;
import static io.sluice.codec.http.HttpChars.equalsLower;
import static io.sluice.codec.http.HttpChars.indexOf;
import static io.sluice.codec.http.HttpChars.skipOws;
import static io.sluice.codec.http.HttpChars.trimOwsEnd;

/**
 * The response side of {@link HeadParser} (RFC 9112 §4, §6.3): the status line, and how the
 * body of a response is delimited — none for 1xx, 204, 304 and answers to HEAD; chunked when
 * Transfer-Encoding ends in {@code chunked} (a Content-Length beside it is dropped); by
 * Content-Length; else until the upstream closes. Every error is a 502 for the client. Input that
 * cannot start a status line ({@code HTTP/d.d SP ddd}), such as the banner of an SSH server, is
 * refused at its first wrong byte.
 */
final class ResponseHeadParser extends HeadParser {

    private static final int S_VERSION = START_LINE;
    private static final int S_CODE = START_LINE + 1;
    private static final int S_REASON = START_LINE + 2;
    private static final int S_CR = START_LINE + 3;

    private boolean bodylessResponse;
    private int status;
    private boolean http10;

    ResponseHeadParser(Http1DecoderConfig config) {
        super(config.maxInitialLineLength(), config.maxHeaderSize());
    }

    @Override
    void expectBodylessResponse(boolean on) {
        bodylessResponse = on;
    }

    @Override
    int badStatus() {
        return 502;
    }

    @Override
    int lineTooLongStatus() {
        return 502;
    }

    @Override
    int headersTooLargeStatus() {
        return 502;
    }

    @Override
    String lineName() {
        return "status line";
    }

    @Override
    String messageName() {
        return "response";
    }

    @Override
    int lexStartLine(byte b) {
        switch (lexState) {
            case L_START, S_VERSION -> {
                if (lexState == L_START) {
                    lexCount = 0;
                }
                if (lexCount < 8) {
                    if (versionByte(lexCount, b)) {
                        lexCount++;
                        return S_VERSION;
                    }
                    return fail("malformed status line");
                }
                if (b == ' ') {
                    lexCount = 0;
                    return S_CODE;
                }
                return fail("malformed status line");
            }
            case S_CODE -> {
                if (lexCount < 3) {
                    boolean ok = lexCount == 0 ? b >= '1' && b <= '5' : b >= '0' && b <= '9';
                    if (!ok) {
                        return fail("malformed status code");
                    }
                    lexCount++;
                    return S_CODE;
                }
                return b == ' ' ? S_REASON : b == '\r' ? S_CR : b == '\n' ? L_LINE_START : fail("malformed status line");
            }
            case S_REASON -> {
                return b == '\r' ? S_CR : b == '\n' ? L_LINE_START : FIELD[b & 0xff] ? S_REASON
                        : fail("control character in status line");
            }
            case S_CR -> {
                return b == '\n' ? L_LINE_START : fail("bare CR in status line");
            }
            default -> throw new IllegalStateException("lexer state " + lexState);
        }
    }

    @Override
    HttpDecodeError parseStartLine(byte[] h, int lineEnd) {
        int sp1 = indexOf(h, 0, lineEnd, (byte) ' ');
        int v = sp1 < 0 ? -1 : version(h, 0, sp1);
        if (v < 0 || lineEnd - sp1 < 4 || (lineEnd - sp1 > 4 && h[sp1 + 4] != ' ')) {
            return error("malformed status line");
        }
        http10 = v == 0;
        int d0 = h[sp1 + 1] - '0';
        int d1 = h[sp1 + 2] - '0';
        int d2 = h[sp1 + 3] - '0';
        if (d0 < 1 || d0 > 5 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) {
            return error("malformed status code");
        }
        if (HttpChars.firstNot(h, sp1 + 4, lineEnd, FIELD) >= 0) {
            return error("control character in status line");
        }
        status = d0 * 100 + d1 * 10 + d2;
        return null;
    }

    @Override
    Object finish(ByteBuf in, int ri, int len, byte[] h, int lineEnd) {
        boolean complete;
        boolean closeDelimited = false;
        boolean chunked = false;
        boolean rebuild = hop || bareLf;
        long cl = contentLength;
        if (status < 200 || status == 204 || status == 304 || bodylessResponse) {
            complete = true;
        } else if (transferEncodingLines > 0) {
            chunked = lastCodingIsChunked(h, teStart, teEnd);
            if (cl >= 0) {
                rebuild = true; // Transfer-Encoding overrides Content-Length, which must not be forwarded
                for (int i = 0; i < count; i++) {
                    if (kinds[i] == HttpHead.CONTENT_LENGTH) {
                        kinds[i] = HttpHead.HOP;
                    }
                }
                cl = -1;
            }
            complete = false;
            closeDelimited = !chunked; // a response not ending in chunked is close-delimited
        } else if (cl >= 0) {
            complete = cl == 0;
        } else {
            complete = false;
            closeDelimited = true;
        }
        return new HttpHead(in.retainedSlice(ri, len), false, null, 0, 0, status, http10, lineEnd, offsets, kinds,
                count, cl, chunked, close, keepAlive, namesOthers, false, rebuild, complete, closeDelimited,
                null);
    }

    /** Whether the last coding of a Transfer-Encoding value is chunked (and nothing follows it). */
    private static boolean lastCodingIsChunked(byte[] h, int start, int end) {
        boolean chunked = false;
        for (int ts = start; ts <= end; ) {
            int te = elementEnd(h, ts, end);
            int s = skipOws(h, ts, te);
            int e = trimOwsEnd(h, s, te);
            if (e > s) {
                chunked = e - s == 7 && equalsLower(h, s, "chunked");
            }
            ts = te + 1;
        }
        return chunked;
    }
}
