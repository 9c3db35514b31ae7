package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;

/**
 * A forwarding HTTP/1.x decoder for a proxy. It emits, in order, for each message:
 * <ul>
 *   <li>one {@link HttpHead}: a retained slice of the head bytes with an index of its parts, and the
 *       facts a proxy needs (framing, keep-alive, hop-by-hop headers, Host, Expect, X-Forwarded-*,
 *       and for requests the target's form, authority and normalized path);</li>
 *   <li>then, unless the head says {@link HttpHead#isComplete()}, {@link HttpBody} pieces, retained
 *       slices of the input, the last one flagged: chunked bodies keep their chunk framing (so they
 *       are forwarded byte for byte) unless {@link #dechunk(boolean)} was set;</li>
 *   <li>or, once, an {@link HttpDecodeError} when the input is not acceptable HTTP/1.x, after which
 *       everything is discarded.</li>
 * </ul>
 * This class is the framing core shared by both directions: where a head ends, size limits,
 * Content-Length, chunked and close-delimited bodies, trailers. What a head means is the business
 * of a {@link HeadParser}: {@link RequestHeadParser} ({@link #forRequests}) or
 * {@link ResponseHeadParser} ({@link #forResponses}), which also carry each side's error statuses.
 *
 * <p>Bodies are never copied and no header becomes a {@code String}; a complete head is copied once
 * into a per-thread scratch array to be parsed, and what is emitted is a slice of the input. A head
 * that is not complete yet is checked as its bytes arrive (each byte once), so input that cannot
 * become a request or response — random bytes, a TLS hello, an SSH banner — is refused at its
 * first impossible byte instead of at the head timeout. Chunked framing must use CRLF, chunk
 * extensions may not hold control characters, and trailer fields are checked like header fields
 * (no framing or Host fields among them).
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
    /** Empty lines tolerated before a start line (RFC 9112 §2.2 asks for at least one). */
    static final int MAX_LEADING_EMPTY_LINES = 8;

    /** Largest scratch array kept per thread (bytes). */
    static final int MAX_KEPT_SCRATCH = HeadParser.MAX_KEPT_SCRATCH;

    private final HeadParser parser;
    private final int maxInitialLineLength;
    private final int maxHeaderSize;

    private int state = HEAD;
    /** Head scanning: offset from the reader index of the next line to look at. */
    private int scanned;
    /** Offset from the reader index of the next byte the parser's lexer has to check. */
    private int lexed;
    private int emptyLines;
    private boolean firstLineSeen;
    /** Length of the start line with its line break, once seen. */
    private int firstLineLength;
    private long remaining;
    private int trailerBytes;
    private boolean dechunk;

    private Http1Decoder(HeadParser parser) {
        this.parser = parser;
        this.maxInitialLineLength = parser.maxInitialLineLength;
        this.maxHeaderSize = parser.maxHeaderSize;
    }

    /** Decodes requests (the server side of a connection). */
    public static Http1Decoder forRequests(Http1DecoderConfig config) {
        return new Http1Decoder(new RequestHeadParser(config));
    }

    /** Decodes responses (the client side of a connection); the path settings do not apply. */
    public static Http1Decoder forResponses(Http1DecoderConfig config) {
        return new Http1Decoder(new ResponseHeadParser(config));
    }

    /** {@link #forRequests} with the given limits and the default path rules. */
    public static Http1Decoder requests(int maxInitialLineLength, int maxHeaderSize) {
        return forRequests(Http1DecoderConfig.of(maxInitialLineLength, maxHeaderSize));
    }

    /** {@link #forResponses} with the given limits. */
    public static Http1Decoder responses(int maxInitialLineLength, int maxHeaderSize) {
        return forResponses(Http1DecoderConfig.of(maxInitialLineLength, maxHeaderSize));
    }

    /** Emit only the data of chunked bodies (from the next body piece on), not the chunk framing. */
    public void dechunk(boolean on) {
        this.dechunk = on;
    }

    /** The next response answers a HEAD request: it has no body whatever its headers say (responses only). */
    public void expectBodylessResponse(boolean on) {
        parser.expectBodylessResponse(on);
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
                checkIncomplete(in, ri, wi, out);
                return;
            }
            int lineLen = lf - pos - (lf > pos && in.getByte(lf - 1) == '\r' ? 1 : 0);
            if (!firstLineSeen) {
                if (lineLen == 0 && pos == ri) {
                    // an empty line before a start line is ignored (RFC 9112 §2.2), a few of them
                    if (++emptyLines > MAX_LEADING_EMPTY_LINES) {
                        fail(in, out, parser.badStatus(), "more than " + MAX_LEADING_EMPTY_LINES
                                + " empty lines before the " + parser.lineName());
                        return;
                    }
                    int skip = lf + 1 - ri;
                    in.readerIndex(lf + 1);
                    ri = lf + 1;
                    pos = ri;
                    lexed = Math.max(0, lexed - skip);
                    if (lexed == 0) {
                        parser.resetLexer();
                    }
                    continue;
                }
                if (lf - ri > maxInitialLineLength) {
                    fail(in, out, parser.lineTooLongStatus(), parser.lineName() + " longer than "
                            + maxInitialLineLength + " bytes");
                    return;
                }
                firstLineSeen = true;
                firstLineLength = lf + 1 - ri;
            } else if (lineLen == 0) {
                int headLen = lf + 1 - ri;
                scanned = 0;
                lexed = 0;
                emptyLines = 0;
                firstLineSeen = false;
                parser.resetLexer();
                if (headLen - firstLineLength > maxHeaderSize) {
                    fail(in, out, parser.headersTooLargeStatus(), parser.messageName() + " headers exceed "
                            + maxHeaderSize + " bytes");
                    return;
                }
                Object parsed = parser.parse(in, ri, headLen);
                if (parsed instanceof HttpHead head) {
                    in.readerIndex(ri + headLen);
                    if (!head.isComplete()) {
                        if (head.isCloseDelimited()) {
                            state = UNTIL_CLOSE;
                        } else if (head.isChunked()) {
                            state = CHUNK_SIZE;
                        } else {
                            state = FIXED;
                            remaining = head.contentLength();
                        }
                    }
                    out.add(head);
                } else {
                    fail(in, out, (HttpDecodeError) parsed);
                }
                return;
            }
            pos = lf + 1;
        }
    }

    /**
     * The head is not complete: check the bytes that arrived since the last look (each byte once),
     * and the size limits, so that what cannot become a head is refused now.
     */
    private void checkIncomplete(ByteBuf in, int ri, int wi, List<Object> out) {
        int from = ri + lexed;
        if (from < wi) {
            in.forEachByte(from, wi - from, parser);
            if (parser.lexError != null) {
                fail(in, out, parser.lexError());
                return;
            }
            lexed = wi - ri;
        }
        int have = wi - ri;
        if (!firstLineSeen && have > maxInitialLineLength) {
            fail(in, out, parser.lineTooLongStatus(), parser.lineName() + " longer than "
                    + maxInitialLineLength + " bytes");
        } else if (firstLineSeen && have - firstLineLength > maxHeaderSize) {
            fail(in, out, parser.headersTooLargeStatus(), parser.messageName() + " headers exceed "
                    + maxHeaderSize + " bytes");
        }
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
                        failBody(in, out, size == -2 ? "bare LF in chunked framing" : "malformed chunk size line");
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
                        failBody(in, out, "missing CRLF after chunk data");
                        return;
                    }
                    p += k;
                    state = CHUNK_SIZE;
                }
                case TRAILER -> {
                    int lf = in.indexOf(p, wi, (byte) '\n');
                    if (lf < 0) {
                        if (trailerBytes + (wi - p) > maxHeaderSize) {
                            failTrailerTooLong(in, out);
                            return;
                        }
                        break loop;
                    }
                    int t = trailerLine(in, p, lf, out);
                    if (t < 0) {
                        return;
                    }
                    p = lf + 1;
                    if (t == 0) {
                        state = HEAD;
                        done = true;
                        break loop;
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
                        failBody(in, out, size == -2 ? "bare LF in chunked framing" : "malformed chunk size line");
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
                        failBody(in, out, "missing CRLF after chunk data");
                        return;
                    }
                    in.skipBytes(k);
                    state = CHUNK_SIZE;
                }
                case TRAILER -> {
                    int lf = in.indexOf(ri, wi, (byte) '\n');
                    if (lf < 0) {
                        if (trailerBytes + (wi - ri) > maxHeaderSize) {
                            failTrailerTooLong(in, out);
                        }
                        return;
                    }
                    int t = trailerLine(in, ri, lf, out);
                    if (t < 0) {
                        return;
                    }
                    in.readerIndex(lf + 1);
                    if (t == 0) {
                        state = HEAD;
                        out.add(new HttpBody(Unpooled.EMPTY_BUFFER, true, 0));
                        return;
                    }
                }
                default -> throw new IllegalStateException("state " + state);
            }
        }
    }

    /**
     * Checks the trailer line {@code [p, lf]}: 0 for the empty line ending the trailer section, 1 for
     * a valid field line, -1 after failing (a field line is checked like a header field; framing and
     * Host fields are refused; lines end in CRLF; the section is bounded by the header size limit).
     */
    private int trailerLine(ByteBuf in, int p, int lf, List<Object> out) {
        trailerBytes += lf + 1 - p;
        if (lf == p || in.getByte(lf - 1) != '\r') {
            failBody(in, out, "bare LF in chunked framing");
            return -1;
        }
        int len = lf - 1 - p;
        if (len == 0) {
            return 0;
        }
        if (trailerBytes > maxHeaderSize) {
            failTrailerTooLong(in, out);
            return -1;
        }
        byte[] h = HeadParser.scratch(len);
        in.getBytes(p, h, 0, len);
        int colon = HttpChars.firstNot(h, 0, len, HttpChars.TOKEN);
        if (colon <= 0 || h[colon] != ':') {
            failBody(in, out, "malformed trailer field");
            return -1;
        }
        if (HttpChars.firstNot(h, colon + 1, len, HttpChars.FIELD) >= 0) {
            failBody(in, out, "control character in trailer field " + HttpChars.text(h, 0, colon));
            return -1;
        }
        byte kind = HeadParser.classify(h, 0, colon);
        if (kind == HttpHead.CONTENT_LENGTH || kind == HttpHead.TRANSFER_ENCODING || kind == HttpHead.HOST) {
            failBody(in, out, HttpChars.text(h, 0, colon) + " is not allowed in a trailer section");
            return -1;
        }
        return 1;
    }

    /** Bytes of the CRLF after chunk data (2), 0 if not all here yet, -1 if something else. */
    private static int chunkEnd(ByteBuf in, int p, int wi) {
        if (in.getByte(p) != '\r') {
            return -1;
        }
        if (p + 1 >= wi) {
            return 0;
        }
        return in.getByte(p + 1) == '\n' ? 2 : -1;
    }

    /**
     * The hex size of the chunk-size line {@code [start, lf]}, or -1 if malformed, -2 if it ends in a
     * bare LF. Extensions ({@code ;name=value}) are forwarded uninterpreted but may hold no control
     * characters; whitespace is allowed only before a {@code ;}.
     */
    private static long chunkSize(ByteBuf in, int start, int lf) {
        if (lf == start || in.getByte(lf - 1) != '\r') {
            return -2;
        }
        int end = lf - 1;
        long size = 0;
        int digits = 0;
        int i = start;
        for (; i < end; i++) {
            int b = in.getByte(i);
            int d = HttpChars.HEX[b & 0xff];
            if (d < 0) {
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
        if (i == end) {
            return size;
        }
        while (i < end && HttpChars.isOws(in.getByte(i))) {
            i++;
        }
        if (i == end || in.getByte(i) != ';') {
            return -1;
        }
        for (i++; i < end; i++) {
            if (!HttpChars.FIELD[in.getByte(i) & 0xff]) {
                return -1;
            }
        }
        return size;
    }

    // ------------------------------------------------------------------ errors

    private void fail(ByteBuf in, List<Object> out, int status, String reason) {
        fail(in, out, new HttpDecodeError(status, reason));
    }

    private void fail(ByteBuf in, List<Object> out, HttpDecodeError error) {
        state = BAD;
        in.skipBytes(in.readableBytes());
        out.add(error);
    }

    private void failBody(ByteBuf in, List<Object> out, String reason) {
        fail(in, out, parser.badStatus(), reason);
    }

    private void failTrailerTooLong(ByteBuf in, List<Object> out) {
        fail(in, out, parser.headersTooLargeStatus(), "trailer section exceeds " + maxHeaderSize + " bytes");
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
