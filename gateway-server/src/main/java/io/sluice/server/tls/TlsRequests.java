package io.sluice.server.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.sluice.core.config.TlsConfig;

import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * What the HTTP proxy does per request on a TLS connection, for the client identity: the identity
 * header ({@code tls.identity_header}) is removed from what the client sent, always, and set to the
 * verified identity when {@code tls.forward_identity} is on; routes that match that header see the
 * verified identity (never the client's copy); the access log gets the identity. One per connection,
 * made at its first request (after the handshake). Cleartext connections have none.
 */
public final class TlsRequests {

    /** Set on every connection of a TLS listener when its handlers are added. */
    static final AttributeKey<DownstreamTls> LISTENER = AttributeKey.valueOf("sluice.tls.listener");

    private final String header;
    private final byte[] headerBytes;
    /** The verified identity as the header's value; null without a client certificate. */
    private final String value;
    private final boolean forward;

    TlsRequests(String header, String value, boolean forward) {
        this.header = header;
        this.headerBytes = header.getBytes(StandardCharsets.US_ASCII);
        this.value = value;
        this.forward = forward && value != null;
    }

    /** The connection's TLS request rules, or null for a cleartext connection. */
    public static TlsRequests of(Channel ch) {
        DownstreamTls tls = ch.attr(LISTENER).get();
        if (tls == null) {
            return null;
        }
        TlsConfig c = tls.current().config();
        PeerIdentity id = ch.attr(PeerIdentity.KEY).get();
        return new TlsRequests(c.identityHeader(), id == null ? null : id.headerValue(), c.forwardIdentity());
    }

    /** The verified client identity (the header's value form), or null. */
    public String identity() {
        return value;
    }

    /** Request headers as routes see them: the identity header is the verified identity (or absent). */
    public Function<String, String> headers(Function<String, String> received) {
        return name -> name.equalsIgnoreCase(header) ? value : received.apply(name);
    }

    /** What the gateway writes for X-Forwarded-Proto (ProxyHeads); on a TLS connection it becomes https. */
    private static final byte[] XFP_HTTP = "X-Forwarded-Proto: http\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] XFP_HTTPS = "X-Forwarded-Proto: https\r\n".getBytes(StandardCharsets.US_ASCII);

    /**
     * The upstream request head without the client's identity header lines, plus the verified
     * identity when forwarded, and {@code X-Forwarded-Proto: https} where the gateway wrote
     * {@code http}. Takes ownership of {@code head}; returns it unchanged when there is nothing to
     * do (a scan of its lines, no copy).
     */
    public ByteBuf rewrite(ByteBufAllocator alloc, ByteBuf head) {
        int start = head.readerIndex();
        int end = head.writerIndex();
        int first = head.indexOf(start, end, (byte) '\n') + 1; // the first header line
        if (first <= 0) {
            return head;
        }
        boolean change = forward;
        for (int line = first; !change && line < end - 2; ) {
            int eol = head.indexOf(line, end, (byte) '\n');
            if (eol < 0) {
                break;
            }
            change = isIdentity(head, line, end) || isXfpHttp(head, line, eol);
            line = eol + 1;
        }
        if (!change) {
            return head;
        }
        ByteBuf out = alloc.directBuffer(head.readableBytes() + 1 + (forward ? header.length() + value.length() + 4 : 0));
        out.writeBytes(head, start, first - start);
        int line = first;
        while (line < end - 2) {
            int eol = head.indexOf(line, end, (byte) '\n');
            if (eol < 0) {
                break;
            }
            if (isXfpHttp(head, line, eol)) {
                out.writeBytes(XFP_HTTPS);
            } else if (!isIdentity(head, line, end)) {
                out.writeBytes(head, line, eol + 1 - line);
            }
            line = eol + 1;
        }
        if (forward) {
            out.writeBytes(headerBytes).writeByte(':').writeByte(' ');
            ByteBufUtil.writeUtf8(out, value);
            out.writeByte('\r').writeByte('\n');
        }
        out.writeByte('\r').writeByte('\n');
        head.release();
        return out;
    }

    private boolean isIdentity(ByteBuf head, int line, int end) {
        return line + headerBytes.length < end && head.getByte(line + headerBytes.length) == ':' && regionMatches(head, line);
    }

    private static boolean isXfpHttp(ByteBuf head, int line, int eol) {
        if (eol + 1 - line != XFP_HTTP.length) {
            return false;
        }
        for (int k = 0; k < XFP_HTTP.length; k++) {
            if (head.getByte(line + k) != XFP_HTTP[k]) {
                return false;
            }
        }
        return true;
    }

    private boolean regionMatches(ByteBuf b, int at) {
        for (int k = 0; k < headerBytes.length; k++) {
            byte c = b.getByte(at + k);
            if (c >= 'A' && c <= 'Z') {
                c += 32;
            }
            if (c != headerBytes[k]) {
                return false;
            }
        }
        return true;
    }
}
