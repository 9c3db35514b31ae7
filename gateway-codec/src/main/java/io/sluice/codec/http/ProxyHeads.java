package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes the heads a proxied hop sends on: byte ranges of the received head copied as they are,
 * minus the hop-by-hop headers (RFC 9110 §7.6.1 and whatever {@code Connection} names), plus
 * X-Forwarded-* and the framing or connection headers this hop needs. A request goes up in
 * origin-form with a Host that names the same authority as its target, and with its framing
 * headers in one canonical form. Runs of untouched header
 * lines are copied in one go; nothing becomes a {@code String} unless it changes.
 */
public final class ProxyHeads {

    private static final byte[] HTTP11 = ascii("HTTP/1.1");
    private static final byte[] SP_HTTP11_CRLF = ascii(" HTTP/1.1\r\n");
    private static final byte[] CRLF = ascii("\r\n");
    private static final byte[] HOST = ascii("Host: ");
    private static final byte[] XFF = ascii("X-Forwarded-For: ");
    private static final byte[] XFP_HTTP = ascii("X-Forwarded-Proto: http\r\n");
    private static final byte[] XFH = ascii("X-Forwarded-Host: ");
    private static final byte[] COMMA_SP = ascii(", ");
    private static final byte[] CONNECTION_CLOSE = ascii("Connection: close\r\n");
    private static final byte[] CONNECTION_KEEP_ALIVE = ascii("Connection: keep-alive\r\n");
    private static final byte[] CHUNKED = ascii("Transfer-Encoding: chunked\r\n");
    /** Length of {@code "Transfer-Encoding: "}, the start of {@link #CHUNKED}. */
    private static final int TRANSFER_ENCODING_NAME_LENGTH = 19;
    private static final byte[] CONTENT_LENGTH = ascii("Content-Length: ");

    /** What the response head must say about the downstream connection. */
    public static final int CONNECTION_AS_IS = 0;
    public static final int CONNECTION_CLOSE_HEADER = 1;
    public static final int CONNECTION_KEEP_ALIVE_HEADER = 2;

    private ProxyHeads() {
    }

    /**
     * {@link #requestHead(ByteBufAllocator, HttpHead, String, String, String, boolean, boolean)} for a
     * peer that is not a trusted proxy (its X-Forwarded-* and Forwarded headers are replaced).
     */
    public static ByteBuf requestHead(ByteBufAllocator alloc, HttpHead req, String target, String hostOverride,
                                      String clientIp, boolean dropExpect) {
        return requestHead(alloc, req, target, hostOverride, clientIp, false, dropExpect);
    }

    /**
     * The request head for the upstream: HTTP/1.1; the target in origin-form (rewritten when
     * {@code target} is not null, else the normalized path plus the query when the received target
     * was absolute-form or not normal); hop-by-hop headers and a handled {@code Expect: 100-continue}
     * removed; Content-Length and Transfer-Encoding in their one canonical form; Host replaced by
     * {@code hostOverride} when set, else by the target's authority for an absolute-form request (so
     * target and Host agree). With a {@code clientIp} (x_forwarded on): from a {@code trustedPeer} the
     * client's X-Forwarded-Proto/-Host and Forwarded are kept (added when missing) and the address is
     * appended to its last X-Forwarded-For; from anyone else those headers are dropped and
     * {@code X-Forwarded-For: clientIp}, {@code X-Forwarded-Proto: http} and
     * {@code X-Forwarded-Host: <authority>} written instead.
     *
     * <p>When none of that changes anything, the received bytes themselves (a retained duplicate of
     * {@link HttpHead#raw()}: the caller still owns {@code req}); else a new buffer.
     */
    public static ByteBuf requestHead(ByteBufAllocator alloc, HttpHead req, String target, String hostOverride,
                                      String clientIp, boolean trustedPeer, boolean dropExpect) {
        ByteBuf raw = req.raw();
        if (target == null && hostOverride == null && clientIp == null && !req.hasHopByHop() && !req.isHttp10()
                && !dropExpect) {
            return raw.retainedDuplicate();
        }
        if (target == null) {
            target = req.forwardTarget();
        }
        boolean absolute = req.targetForm() == HttpHead.ABSOLUTE_FORM;
        boolean replaceHost = hostOverride != null || absolute;
        boolean replaceForwarded = clientIp != null && !trustedPeer;
        int base = raw.readerIndex();
        ByteBuf out = alloc.directBuffer(raw.readableBytes() + 96 + (target == null ? 0 : target.length()));
        ByteBufUtil.writeAscii(out, req.method());
        out.writeByte(' ');
        if (target == null) {
            out.writeBytes(raw, base + req.targetStart(), req.targetEnd() - req.targetStart());
        } else {
            ByteBufUtil.writeAscii(out, target);
        }
        out.writeBytes(SP_HTTP11_CRLF);

        List<String> named = req.connectionNamesOthers() ? connectionNames(req) : null;
        int lastXff = -1;
        boolean xfp = false;
        boolean xfh = false;
        int host = -1;
        if (clientIp != null && !replaceForwarded) {
            for (int i = req.headerCount() - 1; i >= 0; i--) {
                if (req.kind(i) == HttpHead.X_FORWARDED_FOR) {
                    lastXff = i;
                    break;
                }
            }
        }
        int runStart = -1;
        int runEnd = -1;
        for (int i = 0, n = req.headerCount(); i < n; i++) {
            byte kind = req.kind(i);
            boolean copy;
            switch (kind) {
                case HttpHead.CONNECTION, HttpHead.HOP, HttpHead.CONTENT_LENGTH, HttpHead.TRANSFER_ENCODING ->
                        copy = false;
                case HttpHead.EXPECT -> copy = !dropExpect;
                case HttpHead.HOST -> {
                    host = i;
                    copy = !replaceHost;
                }
                case HttpHead.X_FORWARDED_FOR -> copy = !replaceForwarded && i != lastXff;
                case HttpHead.X_FORWARDED_PROTO -> {
                    xfp = true;
                    copy = !replaceForwarded;
                }
                case HttpHead.X_FORWARDED_HOST -> {
                    xfh = true;
                    copy = !replaceForwarded;
                }
                case HttpHead.FORWARDED -> copy = !replaceForwarded;
                default -> copy = named == null || !isNamed(req, i, named);
            }
            if (copy) {
                int s = req.nameStart(i);
                int e = req.valueEnd(i);
                if (runStart >= 0 && s == runEnd + 2 && raw.getByte(base + runEnd) == '\r') {
                    runEnd = e; // adjacent clean line: extend the run
                } else {
                    flushRun(out, raw, base, runStart, runEnd);
                    runStart = s;
                    runEnd = e;
                }
                continue;
            }
            flushRun(out, raw, base, runStart, runEnd);
            runStart = -1;
            if (kind == HttpHead.HOST) {
                writeHost(out, raw, base, req, hostOverride);
            } else if (kind == HttpHead.CONTENT_LENGTH) {
                out.writeBytes(CONTENT_LENGTH);
                writeDecimal(out, req.contentLength());
                out.writeBytes(CRLF);
            } else if (kind == HttpHead.TRANSFER_ENCODING) {
                out.writeBytes(CHUNKED);
            } else if (kind == HttpHead.X_FORWARDED_FOR && clientIp != null && !replaceForwarded) {
                copyLine(out, raw, base, req.nameStart(i), req.valueEnd(i), false);
                if (req.valueEnd(i) > req.valueStart(i)) {
                    out.writeBytes(COMMA_SP);
                }
                ByteBufUtil.writeAscii(out, clientIp);
                out.writeBytes(CRLF);
            }
        }
        flushRun(out, raw, base, runStart, runEnd);
        if (host < 0 && replaceHost) {
            writeHost(out, raw, base, req, hostOverride);
        }
        if (clientIp != null) {
            if (lastXff < 0) {
                out.writeBytes(XFF);
                ByteBufUtil.writeAscii(out, clientIp);
                out.writeBytes(CRLF);
            }
            if (!xfp || replaceForwarded) {
                out.writeBytes(XFP_HTTP);
            }
            if (!xfh || replaceForwarded) {
                if (absolute) {
                    out.writeBytes(XFH);
                    out.writeBytes(raw, base + req.authorityStart(), req.authorityEnd() - req.authorityStart());
                    out.writeBytes(CRLF);
                } else if (host >= 0) {
                    out.writeBytes(XFH);
                    out.writeBytes(raw, base + req.valueStart(host), req.valueEnd(host) - req.valueStart(host));
                    out.writeBytes(CRLF);
                }
            }
        }
        out.writeBytes(CRLF);
        return out;
    }

    /** {@code Host: } the override, else the authority of the absolute-form target. */
    private static void writeHost(ByteBuf out, ByteBuf raw, int base, HttpHead req, String hostOverride) {
        out.writeBytes(HOST);
        if (hostOverride != null) {
            ByteBufUtil.writeAscii(out, hostOverride);
        } else {
            out.writeBytes(raw, base + req.authorityStart(), req.authorityEnd() - req.authorityStart());
        }
        out.writeBytes(CRLF);
    }

    /** Writes {@code v} (not negative) in decimal without making a String. */
    private static void writeDecimal(ByteBuf out, long v) {
        if (v < 10) {
            out.writeByte((int) ('0' + v));
            return;
        }
        int digits = 0;
        for (long t = v; t > 0; t /= 10) {
            digits++;
        }
        int at = out.writerIndex() + digits;
        out.ensureWritable(digits);
        for (int k = 1; k <= digits; k++) {
            out.setByte(at - k, (int) ('0' + v % 10));
            v /= 10;
        }
        out.writerIndex(at);
    }

    /**
     * The response head for the client. Returns the received bytes themselves (the caller then no
     * longer owns {@code resp}) when nothing changes, else a new buffer (the caller still owns and
     * releases {@code resp}). A rebuilt head carries its framing in one canonical form:
     * {@code Content-Length: N}; {@code Transfer-Encoding: chunked}; or, for a close-delimited body
     * with other transfer codings, one {@code Transfer-Encoding} line with those codings, ending in
     * {@code , chunked} when {@code addChunked}.
     *
     * @param addChunked  add {@code Transfer-Encoding: chunked} (a close-delimited body is chunked by us)
     * @param dropFraming remove Transfer-Encoding (the body is de-chunked for an HTTP/1.0 client)
     * @param connection  one of the {@code CONNECTION_*} constants
     */
    public static ByteBuf responseHead(ByteBufAllocator alloc, HttpHead resp, boolean addChunked, boolean dropFraming,
                                int connection) {
        ByteBuf raw = resp.raw();
        if (!resp.hasHopByHop() && !resp.isHttp10() && !addChunked && !dropFraming && connection == CONNECTION_AS_IS) {
            return raw;
        }
        int base = raw.readerIndex();
        ByteBuf out = alloc.directBuffer(raw.readableBytes() + 48);
        out.writeBytes(HTTP11);
        out.writeBytes(raw, base + 8, resp.lineEnd() - 8);
        out.writeBytes(CRLF);
        List<String> named = resp.connectionNamesOthers() ? connectionNames(resp) : null;
        boolean chunkedWritten = false;
        int runStart = -1;
        int runEnd = -1;
        for (int i = 0, n = resp.headerCount(); i < n; i++) {
            byte kind = resp.kind(i);
            boolean copy = switch (kind) {
                case HttpHead.CONNECTION, HttpHead.HOP, HttpHead.CONTENT_LENGTH, HttpHead.TRANSFER_ENCODING -> false;
                case HttpHead.OTHER -> named == null || !isNamed(resp, i, named);
                default -> true;
            };
            if (copy) {
                int s = resp.nameStart(i);
                int e = resp.valueEnd(i);
                if (runStart >= 0 && s == runEnd + 2 && raw.getByte(base + runEnd) == '\r') {
                    runEnd = e;
                } else {
                    flushRun(out, raw, base, runStart, runEnd);
                    runStart = s;
                    runEnd = e;
                }
                continue;
            }
            flushRun(out, raw, base, runStart, runEnd);
            runStart = -1;
            if (kind == HttpHead.CONTENT_LENGTH) {
                out.writeBytes(CONTENT_LENGTH);
                writeDecimal(out, resp.contentLength());
                out.writeBytes(CRLF);
            } else if (kind == HttpHead.TRANSFER_ENCODING && !dropFraming) {
                if (resp.isChunked()) {
                    out.writeBytes(CHUNKED);
                } else {
                    // transfer codings other than chunked (the decoder refuses chunked among others)
                    out.writeBytes(CHUNKED, 0, TRANSFER_ENCODING_NAME_LENGTH);
                    writeList(out, raw, base + resp.valueStart(i), base + resp.valueEnd(i));
                    if (addChunked) {
                        out.writeBytes(COMMA_SP);
                        out.writeBytes(CHUNKED, TRANSFER_ENCODING_NAME_LENGTH, CHUNKED.length - TRANSFER_ENCODING_NAME_LENGTH);
                    } else {
                        out.writeBytes(CRLF);
                    }
                }
                chunkedWritten = addChunked;
            }
        }
        flushRun(out, raw, base, runStart, runEnd);
        if (addChunked && !chunkedWritten) {
            out.writeBytes(CHUNKED);
        }
        if (connection == CONNECTION_CLOSE_HEADER) {
            out.writeBytes(CONNECTION_CLOSE);
        } else if (connection == CONNECTION_KEEP_ALIVE_HEADER) {
            out.writeBytes(CONNECTION_KEEP_ALIVE);
        }
        out.writeBytes(CRLF);
        return out;
    }

    /** Writes the elements of the list {@code raw[from, to)} trimmed and separated by ", ". */
    private static void writeList(ByteBuf out, ByteBuf raw, int from, int to) {
        boolean first = true;
        for (int ts = from; ts < to; ) {
            int comma = raw.indexOf(ts, to, (byte) ',');
            int te = comma < 0 ? to : comma;
            int s = ts;
            int e = te;
            while (s < e && HttpChars.isOws(raw.getByte(s))) {
                s++;
            }
            while (e > s && HttpChars.isOws(raw.getByte(e - 1))) {
                e--;
            }
            if (e > s) {
                if (!first) {
                    out.writeBytes(COMMA_SP);
                }
                out.writeBytes(raw, s, e - s);
                first = false;
            }
            ts = te + 1;
        }
    }

    private static void flushRun(ByteBuf out, ByteBuf raw, int base, int start, int end) {
        if (start >= 0) {
            copyLine(out, raw, base, start, end, true);
        }
    }

    private static void copyLine(ByteBuf out, ByteBuf raw, int base, int start, int end, boolean crlf) {
        out.writeBytes(raw, base + start, end - start);
        if (crlf) {
            out.writeBytes(CRLF);
        }
    }

    /** Header names listed in Connection, other than close and keep-alive (lower case). */
    private static List<String> connectionNames(HttpHead h) {
        List<String> names = new ArrayList<>(2);
        for (int i = 0; i < h.headerCount(); i++) {
            if (h.kind(i) != HttpHead.CONNECTION) {
                continue;
            }
            for (String token : h.value(i).split(",")) {
                String t = token.trim().toLowerCase(java.util.Locale.ROOT);
                if (!t.isEmpty() && !t.equals("close") && !t.equals("keep-alive") && !t.equals("transfer-encoding")
                        && !t.equals("content-length") && !t.equals("host")) {
                    names.add(t);
                }
            }
        }
        return names;
    }

    private static boolean isNamed(HttpHead h, int i, List<String> names) {
        for (String n : names) {
            if (h.nameIs(i, n)) {
                return true;
            }
        }
        return false;
    }

    /** The Host header's name part, lower case, without port (IPv6 brackets kept). */
    public static String hostWithoutPort(String host) {
        if (host == null) {
            return null;
        }
        int end = host.length();
        if (host.startsWith("[")) {
            int close = host.indexOf(']');
            end = close < 0 ? end : close + 1;
        } else {
            int colon = host.lastIndexOf(':');
            if (colon >= 0) {
                end = colon;
            }
        }
        return host.substring(0, end).toLowerCase(java.util.Locale.ROOT);
    }

    /** The path of a request-target, without query or fragment. */
    public static String pathOf(String uri) {
        int q = uri.indexOf('?');
        int f = uri.indexOf('#');
        int end = q < 0 ? (f < 0 ? uri.length() : f) : (f < 0 ? q : Math.min(q, f));
        if (uri.startsWith("http://") || uri.startsWith("https://")) {
            int slash = uri.indexOf('/', uri.indexOf("//") + 2);
            return slash < 0 || slash >= end ? "/" : uri.substring(slash, end);
        }
        return uri.substring(0, end);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }
}
