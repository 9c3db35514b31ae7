package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;

import static io.sluice.codec.http.HttpChars.FIELD;
import static io.sluice.codec.http.HttpChars.TOKEN;
import static io.sluice.codec.http.HttpChars.equalsLower;
import static io.sluice.codec.http.HttpChars.indexOf;
import static io.sluice.codec.http.HttpChars.matches;
import static io.sluice.codec.http.HttpChars.shown;
import static io.sluice.codec.http.HttpChars.skipOws;
import static io.sluice.codec.http.HttpChars.trimOwsEnd;

/**
 * The response side of {@link HeadParser} (RFC 9112 §4, §6.3): the status line, and how the
 * body of a response is delimited — none for 1xx, 204, 304 and answers to HEAD; chunked when
 * Transfer-Encoding is exactly {@code chunked}; by Content-Length; until the upstream closes when
 * Transfer-Encoding lists other codings only, or there is no framing header. Framing a client
 * could read another way is an error (a 502 for the client, like nginx): two Content-Length
 * lines or a list (even of equal values), two Transfer-Encoding lines, Transfer-Encoding with
 * Content-Length or in an HTTP/1.0 response, {@code chunked} beside other codings. A framing
 * header in another legal form (whitespace, leading zeros, case) marks the head for rebuilding,
 * so that {@link ProxyHeads#responseHead} writes it in its one canonical form. Every error is a
 * 502 for the client. Input that cannot start a status line ({@code HTTP/d.d SP ddd}), such as the
 * banner of an SSH server, is refused at its first wrong byte.
 */
final class ResponseHeadParser extends HeadParser {

    private static final int S_VERSION = START_LINE;
    private static final int S_CODE = START_LINE + 1;
    private static final int S_REASON = START_LINE + 2;
    private static final int S_CR = START_LINE + 3;

    // what a Transfer-Encoding value says (transferCodings)
    private static final int NO_TE = 0;
    private static final int CHUNKED = 1;
    private static final int OTHER_CODINGS = 2;
    private static final int CHUNKED_NOT_ALONE = 3;
    private static final int BAD_TE = 4;

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
        // The framing rules hold for every response, even one whose body is not read (1xx, 204,
        // 304, HEAD): the client sees its framing headers too.
        if (contentLengthLines > 1) {
            return error("more than one Content-Length header");
        }
        if (contentLengthList) {
            int i = indexOfKind(HttpHead.CONTENT_LENGTH);
            return error("invalid Content-Length: " + shown(h, offsets[i * 4 + 2], offsets[i * 4 + 3]));
        }
        boolean framingRewrite = !contentLengthCanonical;
        int te = NO_TE;
        if (transferEncodingLines > 0) {
            if (http10) {
                return error("Transfer-Encoding in an HTTP/1.0 response"); // RFC 9112 §6.1: faulty framing
            }
            if (transferEncodingLines > 1) {
                return error("more than one Transfer-Encoding header");
            }
            if (contentLength >= 0) {
                // RFC 9112 §6.3 lets a proxy treat this as an error; nginx does: whichever one the
                // client would believe, one of the two headers lies about where the response ends
                return error("both Content-Length and Transfer-Encoding");
            }
            te = transferCodings(h, teStart, teEnd);
            if (te == BAD_TE) {
                return error("invalid Transfer-Encoding: " + shown(h, teStart, teEnd));
            }
            if (te == CHUNKED_NOT_ALONE) {
                return error("chunked must be the only transfer coding: " + shown(h, teStart, teEnd));
            }
            // chunked is re-emitted as exactly "Transfer-Encoding: chunked"; other codings as one
            // line that ends in ", chunked" when the gateway chunks the close-delimited body
            framingRewrite |= te == OTHER_CODINGS || !teCanonicalLine || !matches(h, teStart, "chunked");
        }
        boolean complete;
        boolean closeDelimited = false;
        boolean chunked = te == CHUNKED;
        if (status < 200 || status == 204 || status == 304 || bodylessResponse) {
            complete = true;
        } else if (te != NO_TE) {
            complete = false;
            closeDelimited = !chunked; // codings without chunked: the body ends when the upstream closes
        } else if (contentLength >= 0) {
            complete = contentLength == 0;
        } else {
            complete = false;
            closeDelimited = true;
        }
        boolean rebuild = hop || bareLf || framingRewrite;
        return new HttpHead(in.retainedSlice(ri, len), false, null, 0, 0, status, http10, lineEnd, offsets, kinds,
                count, contentLength, chunked, close, keepAlive, namesOthers, false, rebuild, complete, closeDelimited,
                null);
    }

    private int indexOfKind(byte kind) {
        for (int i = 0; i < count; i++) {
            if (kinds[i] == kind) {
                return i;
            }
        }
        return 0;
    }

    /**
     * Reads a Transfer-Encoding value: {@link #CHUNKED} for {@code chunked} alone, {@link #OTHER_CODINGS}
     * for a list of codings without it (a close-delimited body), {@link #CHUNKED_NOT_ALONE} when
     * {@code chunked} is one of several (before or after other codings, or twice: the gateway
     * forwards chunk framing byte for byte and decodes no other coding, so it cannot frame those
     * the way every client would), {@link #BAD_TE} for an empty list or element, or an element
     * that is not a token (coding parameters included).
     */
    private static int transferCodings(byte[] h, int start, int end) {
        int elements = 0;
        boolean chunked = false;
        for (int ts = start; ts <= end; ) {
            int te = elementEnd(h, ts, end);
            int s = skipOws(h, ts, te);
            int e = trimOwsEnd(h, s, te);
            if (e == s || HttpChars.firstNot(h, s, e, TOKEN) >= 0) {
                return BAD_TE;
            }
            elements++;
            chunked |= e - s == 7 && equalsLower(h, s, "chunked");
            ts = te + 1;
        }
        if (!chunked) {
            return OTHER_CODINGS;
        }
        return elements == 1 ? CHUNKED : CHUNKED_NOT_ALONE;
    }
}
