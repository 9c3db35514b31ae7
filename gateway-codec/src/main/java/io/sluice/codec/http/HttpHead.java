package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCounted;

import java.nio.charset.StandardCharsets;

/**
 * The head of one HTTP/1.x message as {@link Http1Decoder} read it: the raw bytes (a retained
 * slice of the input, never copied) plus an index of where each part is. Nothing is turned into a
 * {@code String} unless someone asks: the proxy mostly copies byte ranges from here to the
 * upstream head, and looks at the few facts the decoder worked out while scanning (framing,
 * keep-alive, hop-by-hop headers, Host, X-Forwarded-*).
 *
 * <p>Offsets are relative to {@link #raw()}'s reader index. Reference counting is delegated to
 * the raw buffer: whoever holds the head releases it (or hands {@link #raw()} on).
 */
public final class HttpHead implements ReferenceCounted {

    /** Header kinds the decoder recognises (everything else is {@link #OTHER}). */
    public static final byte OTHER = 0;
    public static final byte HOST = 1;
    public static final byte CONTENT_LENGTH = 2;
    public static final byte TRANSFER_ENCODING = 3;
    public static final byte CONNECTION = 4;
    /** Hop-by-hop by definition: Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade, Proxy-Authorization/-Authenticate. */
    public static final byte HOP = 5;
    public static final byte EXPECT = 6;
    public static final byte X_FORWARDED_FOR = 7;
    public static final byte X_FORWARDED_PROTO = 8;
    public static final byte X_FORWARDED_HOST = 9;
    /** RFC 7239 {@code Forwarded}. */
    public static final byte FORWARDED = 10;

    /** Request-target forms (RFC 9112 §3.2); authority-form (CONNECT) is refused by the decoder. */
    public static final byte ORIGIN_FORM = 0;
    public static final byte ABSOLUTE_FORM = 1;
    public static final byte ASTERISK_FORM = 2;

    final ByteBuf raw;
    final boolean request;
    /** Request: the method (an interned constant for the common ones). */
    final String method;
    final int targetStart;
    final int targetEnd;
    /** Response: the status code; the reason phrase starts at {@link #lineEnd} minus its length. */
    final int status;
    final boolean http10;
    /** End of the first line (exclusive, before CR LF). */
    final int lineEnd;
    /** nameStart, nameEnd, valueStart, valueEnd for each header. */
    final int[] offsets;
    final byte[] kinds;
    final int count;
    /** Content-Length, or -1 when absent. */
    final long contentLength;
    final boolean chunked;
    /** Connection: close / keep-alive seen. */
    final boolean connectionClose;
    final boolean connectionKeepAlive;
    /** The Connection header names other headers (which are hop-by-hop for this message). */
    final boolean connectionNamesOthers;
    final boolean expectContinue;
    /**
     * The head must not be forwarded as is: a hop-by-hop header, a line ended by a bare LF, a
     * framing header not in canonical form (or transfer codings other than chunked), or a request
     * target that is forwarded differently (absolute-form, or a path that normalization changed).
     */
    final boolean hasHopByHop;
    /**
     * Request: what the decoder read in a target that is not a plain origin-form one with a normal
     * path; null for the common case, so an ordinary head carries (and allocates) nothing more.
     */
    final Target special;

    /** A request target that is absolute-form, asterisk-form, or whose path normalization changed. */
    static final class Target {
        /** {@link #ABSOLUTE_FORM}, {@link #ASTERISK_FORM} or {@link #ORIGIN_FORM}. */
        final byte form;
        /** Absolute-form: the authority inside the target; else -1. */
        final int authorityStart;
        final int authorityEnd;
        /** End of the path as received (the query, if any, starts here). */
        final int pathEnd;
        /** The path after normalization when it differs from the received one, else null. */
        final String normalizedPath;

        Target(byte form, int authorityStart, int authorityEnd, int pathEnd, String normalizedPath) {
            this.form = form;
            this.authorityStart = authorityStart;
            this.authorityEnd = authorityEnd;
            this.pathEnd = pathEnd;
            this.normalizedPath = normalizedPath;
        }
    }
    /** No body follows: the message ends with its head. */
    final boolean complete;
    /** Response: no framing header, the body runs until the upstream closes. */
    final boolean closeDelimited;

    HttpHead(ByteBuf raw, boolean request, String method, int targetStart, int targetEnd, int status, boolean http10,
             int lineEnd, int[] offsets, byte[] kinds, int count, long contentLength, boolean chunked,
             boolean connectionClose, boolean connectionKeepAlive, boolean connectionNamesOthers,
             boolean expectContinue, boolean hasHopByHop, boolean complete, boolean closeDelimited,
             Target special) {
        this.raw = raw;
        this.request = request;
        this.method = method;
        this.targetStart = targetStart;
        this.targetEnd = targetEnd;
        this.status = status;
        this.http10 = http10;
        this.lineEnd = lineEnd;
        this.offsets = offsets;
        this.kinds = kinds;
        this.count = count;
        this.contentLength = contentLength;
        this.chunked = chunked;
        this.connectionClose = connectionClose;
        this.connectionKeepAlive = connectionKeepAlive;
        this.connectionNamesOthers = connectionNamesOthers;
        this.expectContinue = expectContinue;
        this.hasHopByHop = hasHopByHop;
        this.complete = complete;
        this.closeDelimited = closeDelimited;
        this.special = special;
    }

    /** The raw head bytes, CR LF CR LF included. */
    public ByteBuf raw() {
        return raw;
    }

    public boolean isRequest() {
        return request;
    }

    public String method() {
        return method;
    }

    /** The request-target as a string (allocates). */
    public String target() {
        return string(targetStart, targetEnd);
    }

    /** Index of the request-target in {@link #raw()}, for copying it without a string. */
    public int targetStart() {
        return targetStart;
    }

    public int targetEnd() {
        return targetEnd;
    }

    /** {@link #ORIGIN_FORM}, {@link #ABSOLUTE_FORM} or {@link #ASTERISK_FORM}. */
    public byte targetForm() {
        return special == null ? ORIGIN_FORM : special.form;
    }

    /**
     * The authority the request is for (RFC 9112 §3.2.2, §7.2): the one inside an absolute-form
     * target (whatever Host says), else the Host value; null when neither is there. Allocates.
     */
    public String authority() {
        if (special != null && special.form == ABSOLUTE_FORM) {
            return string(special.authorityStart, special.authorityEnd);
        }
        int i = indexOf(HOST);
        return i < 0 ? null : value(i);
    }

    /**
     * The path to route on and to forward: normalized (dot segments removed, unreserved characters
     * decoded, see {@link PathNormalizer}), without the query; {@code *} for an asterisk-form target.
     * Allocates only when the received path was already normal.
     */
    public String path() {
        if (special == null) {
            return string(targetStart, pathEnd()); // origin-form, already normal
        }
        return special.normalizedPath != null ? special.normalizedPath
                : string(special.form == ABSOLUTE_FORM ? special.authorityEnd : targetStart, special.pathEnd);
    }

    /**
     * The origin-form target to send upstream when it differs from the received one (an
     * absolute-form target, or a path normalization changed): the normalized path plus the query
     * as received. Null when the received target is forwarded as it is.
     */
    public String forwardTarget() {
        if (special == null || special.form != ABSOLUTE_FORM && special.normalizedPath == null) {
            return null;
        }
        return path() + string(special.pathEnd, targetEnd);
    }

    /** End of the path in the target: its query's '?', else the target's end. */
    private int pathEnd() {
        if (special != null) {
            return special.pathEnd;
        }
        int base = raw.readerIndex();
        int q = raw.indexOf(base + targetStart, base + targetEnd, (byte) '?');
        return q < 0 ? targetEnd : q - base;
    }

    /** Absolute-form: the authority's start in {@link #raw()}; else -1. */
    int authorityStart() {
        return special == null ? -1 : special.authorityStart;
    }

    int authorityEnd() {
        return special == null ? -1 : special.authorityEnd;
    }

    public int status() {
        return status;
    }

    /** True for HTTP/1.0, false for HTTP/1.1. */
    public boolean isHttp10() {
        return http10;
    }

    /** End of the start line, before its line break. */
    public int lineEnd() {
        return lineEnd;
    }

    /** Number of header fields. */
    public int headerCount() {
        return count;
    }

    public byte kind(int i) {
        return kinds[i];
    }

    public int nameStart(int i) {
        return offsets[i * 4];
    }

    public int nameEnd(int i) {
        return offsets[i * 4 + 1];
    }

    public int valueStart(int i) {
        return offsets[i * 4 + 2];
    }

    public int valueEnd(int i) {
        return offsets[i * 4 + 3];
    }

    public String name(int i) {
        return string(nameStart(i), nameEnd(i));
    }

    public String value(int i) {
        return string(valueStart(i), valueEnd(i));
    }

    /** The index of the first header of {@code kind}, or -1. */
    public int indexOf(byte kind) {
        for (int i = 0; i < count; i++) {
            if (kinds[i] == kind) {
                return i;
            }
        }
        return -1;
    }

    /** The value of the first header named {@code name} (ASCII, any case), or null. */
    public String header(String name) {
        int i = indexOf(name);
        return i < 0 ? null : value(i);
    }

    /** The index of the first header named {@code name} (ASCII, any case), or -1. */
    public int indexOf(CharSequence name) {
        int len = name.length();
        for (int i = 0; i < count; i++) {
            int s = offsets[i * 4];
            if (offsets[i * 4 + 1] - s == len && equalsIgnoreCase(s, name)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether header {@code i}'s name equals {@code name} (ASCII, any case). */
    public boolean nameIs(int i, CharSequence name) {
        int s = offsets[i * 4];
        return offsets[i * 4 + 1] - s == name.length() && equalsIgnoreCase(s, name);
    }

    private boolean equalsIgnoreCase(int start, CharSequence name) {
        int base = raw.readerIndex() + start;
        for (int k = 0; k < name.length(); k++) {
            int a = raw.getByte(base + k) | 0x20;
            int b = name.charAt(k) | 0x20;
            if (a != b) {
                return false;
            }
        }
        return true;
    }

    public long contentLength() {
        return contentLength;
    }

    public boolean isChunked() {
        return chunked;
    }

    public boolean connectionClose() {
        return connectionClose;
    }

    public boolean connectionKeepAlive() {
        return connectionKeepAlive;
    }

    public boolean connectionNamesOthers() {
        return connectionNamesOthers;
    }

    /** HTTP/1.1 keep-alive semantics: 1.1 unless {@code close}, 1.0 only with {@code keep-alive}. */
    public boolean isKeepAlive() {
        return http10 ? connectionKeepAlive && !connectionClose : !connectionClose;
    }

    public boolean expectsContinue() {
        return expectContinue;
    }

    /**
     * Some header must be dropped or rewritten before this head is forwarded (or a line ends in a
     * bare LF, which a forwarded head must not).
     */
    public boolean hasHopByHop() {
        return hasHopByHop;
    }

    /** No body follows this head. */
    public boolean isComplete() {
        return complete;
    }

    /** A response whose body ends when the connection closes. */
    public boolean isCloseDelimited() {
        return closeDelimited;
    }

    /** Whether the message has a body to stream (request: declared by Content-Length &gt; 0 or chunked). */
    public boolean hasBody() {
        return !complete;
    }

    /** Bytes {@code [start, end)} of the head as ISO-8859-1 text. */
    public String string(int start, int end) {
        return raw.toString(raw.readerIndex() + start, end - start, StandardCharsets.ISO_8859_1);
    }

    @Override
    public int refCnt() {
        return raw.refCnt();
    }

    @Override
    public HttpHead retain() {
        raw.retain();
        return this;
    }

    @Override
    public HttpHead retain(int increment) {
        raw.retain(increment);
        return this;
    }

    @Override
    public HttpHead touch() {
        raw.touch();
        return this;
    }

    @Override
    public HttpHead touch(Object hint) {
        raw.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return raw.release();
    }

    @Override
    public boolean release(int decrement) {
        return raw.release(decrement);
    }

    @Override
    public String toString() {
        return request ? "HttpHead[" + method + " " + target() + (http10 ? " HTTP/1.0" : " HTTP/1.1") + ", " + count
                + " headers]" : "HttpHead[" + status + ", " + count + " headers]";
    }
}
