package io.sluice.server.http;

import io.netty.channel.Channel;
import io.sluice.core.config.HttpOptions;

import java.net.InetSocketAddress;

/**
 * The client end of one downstream HTTP connection, as the proxy needs it: its address as text
 * (for X-Forwarded-For and the access log) and whether it is a trusted proxy. Each is worked out
 * once per connection, when first needed. Event loop only.
 */
final class ClientPeer {

    private final Channel channel;
    private String ip;
    /** The peer's address bytes, once {@link #trusted} needed them. */
    private byte[] address;

    ClientPeer(Channel channel) {
        this.channel = channel;
    }

    /** The client's address as text ("unknown" when it has none). */
    String ip() {
        String s = ip;
        if (s == null) {
            s = channel.remoteAddress() instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : "unknown";
            ip = s;
        }
        return s;
    }

    /**
     * Whether the peer is one of {@code o}'s {@code http.trusted_proxies} (its X-Forwarded-* and
     * Forwarded headers are then kept and appended to). The list is the current one (a reload
     * applies to the next request).
     */
    boolean trusted(HttpOptions o) {
        if (o.trustedProxies().isEmpty()) {
            return false;
        }
        byte[] peer = address;
        if (peer == null) {
            peer = channel.remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                    ? a.getAddress().getAddress() : new byte[0];
            address = peer;
        }
        return o.trusts(peer);
    }
}
