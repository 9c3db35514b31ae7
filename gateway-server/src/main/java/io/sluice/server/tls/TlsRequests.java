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

    private TlsRequests(String header, String value, boolean forward) {
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

    /**
     * The upstream request head without the client's identity header lines, plus the verified
     * identity when forwarded. Takes ownership of {@code head}; returns it unchanged when there is
     * nothing to do (the common case: no such header, nothing forwarded).
     */
    public ByteBuf rewrite(ByteBufAllocator alloc, ByteBuf head) {
        int found = findHeader(head, 0);
        if (found < 0 && !forward) {
            return head;
        }
        int start = head.readerIndex();
        int end = head.writerIndex();
        ByteBuf out = alloc.directBuffer(head.readableBytes() + (forward ? header.length() + value.length() + 4 : 0));
        int pos = start;
        while (found >= 0) {
            out.writeBytes(head, pos, found - pos);
            int eol = head.indexOf(found, end, (byte) '\n');
            pos = eol < 0 ? end - 2 : eol + 1;
            found = findHeader(head, pos - 1 - start); // from the line break that ends the removed line
        }
        // everything up to the blank line that ends the head, then the identity, then the blank line
        out.writeBytes(head, pos, end - 2 - pos);
        if (forward) {
            out.writeBytes(headerBytes).writeByte(':').writeByte(' ');
            ByteBufUtil.writeUtf8(out, value);
            out.writeByte('\r').writeByte('\n');
        }
        out.writeByte('\r').writeByte('\n');
        head.release();
        return out;
    }

    /** Index of the first header line at or after {@code from} (relative) named {@link #header}, or -1. */
    private int findHeader(ByteBuf head, int from) {
        int start = head.readerIndex();
        int end = head.writerIndex();
        int i = head.indexOf(start + Math.max(from, 0), end, (byte) '\n');
        while (i >= 0 && i + 1 < end) {
            int line = i + 1;
            if (line + headerBytes.length < end && head.getByte(line + headerBytes.length) == ':'
                    && regionMatches(head, line)) {
                return line;
            }
            i = head.indexOf(line, end, (byte) '\n');
        }
        return -1;
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
