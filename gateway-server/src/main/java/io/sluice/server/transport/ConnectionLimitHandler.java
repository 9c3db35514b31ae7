package io.sluice.server.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.sluice.core.config.ListenerConfig;
import io.sluice.server.metrics.ListenerMetrics;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * On a listener's server channel(s), before Netty's acceptor: refuses an accepted connection
 * when the listener already has {@code max_connections} open, or its client address
 * {@code max_connections_per_client}. A refused connection is closed at once with a reset
 * (SO_LINGER 0: no TIME_WAIT left behind), before it is registered with an event loop or gets a
 * pipeline, and counted in {@code sluice.downstream.connections.refused{reason}}. It applies to
 * every protocol (HTTP, Bolt, auto): they share this accept path.
 *
 * <p>One instance per listener, shared by its sockets (with {@code reuse_port} one per worker),
 * so the counts are atomics; the per-client map exists only while a per-client limit is set, and
 * an address leaves it with its last connection. The cost is paid per connection, never per request.
 */
@ChannelHandler.Sharable
public final class ConnectionLimitHandler extends ChannelInboundHandlerAdapter {

    private final ListenerMetrics metrics;
    private final AtomicInteger open = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> perClient = new ConcurrentHashMap<>();
    private volatile int max;
    private volatile int maxPerClient;

    public ConnectionLimitHandler(ListenerConfig config, ListenerMetrics metrics) {
        this.metrics = metrics;
        update(config);
    }

    /** Reload: the new limits apply to the next accepted connection (open ones stay). */
    public void update(ListenerConfig config) {
        this.max = config.maxConnections();
        this.maxPerClient = config.maxConnectionsPerClient();
    }

    /** Open connections this listener accepted (for tests and the admin API). */
    public int open() {
        return open.get();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof Channel child)) {
            ctx.fireChannelRead(msg);
            return;
        }
        int limit = max;
        if (open.incrementAndGet() > limit && limit > 0) {
            open.decrementAndGet();
            refuse(child, false);
            return;
        }
        int perLimit = maxPerClient;
        InetAddress client = perLimit > 0 && child.remoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
        if (client != null && !acquire(client, perLimit)) {
            open.decrementAndGet();
            refuse(child, true);
            return;
        }
        child.closeFuture().addListener(client == null ? release : (ChannelFutureListener) f -> {
            open.decrementAndGet();
            releaseClient(client);
        });
        ctx.fireChannelRead(child);
    }

    private final ChannelFutureListener release = f -> open.decrementAndGet();

    /** Counts one more connection from {@code client} unless it has {@code limit} already. */
    private boolean acquire(InetAddress client, int limit) {
        for (;;) {
            AtomicInteger n = perClient.computeIfAbsent(client, k -> new AtomicInteger());
            int c = n.get();
            if (c < 0) {
                Thread.onSpinWait(); // being removed by its last connection's close: take a fresh counter
                continue;
            }
            if (c >= limit) {
                return false;
            }
            if (n.compareAndSet(c, c + 1)) {
                return true;
            }
        }
    }

    private void releaseClient(InetAddress client) {
        AtomicInteger n = perClient.get(client);
        if (n != null && n.decrementAndGet() == 0 && n.compareAndSet(0, -1)) {
            perClient.remove(client, n);
        }
    }

    private void refuse(Channel child, boolean perClientLimit) {
        metrics.connectionRefused(perClientLimit);
        try {
            child.config().setOption(ChannelOption.SO_LINGER, 0);
        } catch (RuntimeException ignored) {
            // a transport without SO_LINGER: a plain close
        }
        child.unsafe().closeForcibly();
    }
}
