package io.sluice.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.server.transport.Sockets;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The listening socket(s) of one listener. Either one socket accepted on one worker loop, its
 * connections spread over all workers; or, with SO_REUSEPORT, one socket per worker loop whose
 * connections stay on that loop (the kernel spreads new connections over the sockets, so no
 * accepted connection is handed from one thread to another).
 */
final class ListenSockets {

    private final List<Channel> channels = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Void> bound = new CompletableFuture<>();
    private volatile boolean closed;
    /** Set by {@link #startAccepting}; sockets bound after it accept as soon as they listen. */
    private volatile boolean accepting;

    /** Names the listener in bind failures ({@code listener web}). */
    private final String what;

    private ListenSockets(String what) {
        this.what = what;
    }

    /**
     * Binds {@code template} (options, handlers; no group) to {@code host:port}. With
     * {@code reusePort} non-null, one socket per loop of {@code workers}; port 0 binds the first
     * to an ephemeral port and the others to the same one.
     */
    static ListenSockets bind(ServerBootstrap template, EventLoopGroup workers, ChannelOption<Boolean> reusePort,
                              String host, int port, String what) {
        ListenSockets s = new ListenSockets(what);
        if (reusePort == null) {
            s.bindOne(template.clone().group(workers, workers), host, port, () -> s.bound.complete(null));
            return s;
        }
        List<EventLoop> loops = new ArrayList<>();
        for (EventExecutor e : workers) {
            loops.add((EventLoop) e);
        }
        s.bindEach(template, reusePort, loops, 0, host, port);
        return s;
    }

    private void bindEach(ServerBootstrap template, ChannelOption<Boolean> reusePort, List<EventLoop> loops, int i,
                          String host, int port) {
        if (i == loops.size()) {
            bound.complete(null);
            return;
        }
        EventLoop loop = loops.get(i);
        ServerBootstrap b = template.clone().group(loop, loop).option(reusePort, true);
        bindOne(b, host, port, () -> {
            int actual = port != 0 ? port : ((InetSocketAddress) channels.get(0).localAddress()).getPort();
            bindEach(template, reusePort, loops, i + 1, host, actual);
        });
    }

    private void bindOne(ServerBootstrap b, String host, int port, Runnable next) {
        ChannelFuture f = b.bind(host, port);
        channels.add(f.channel());
        f.addListener(x -> {
            if (!x.isSuccess()) {
                close();
                bound.completeExceptionally(Sockets.bindFailure(what, host, port, x.cause()));
            } else if (closed) {
                f.channel().close();
                bound.completeExceptionally(new IllegalStateException("listener closed while binding"));
            } else {
                try {
                    if (accepting) {
                        f.channel().config().setAutoRead(true);
                    }
                    next.run();
                } catch (RuntimeException e) { // Netty would only log it, and bound would never complete
                    close();
                    bound.completeExceptionally(e);
                }
            }
        });
    }

    /** Completes when every socket listens; fails (with every socket closed) if one cannot bind. */
    CompletableFuture<Void> bound() {
        return bound;
    }

    /** Blocks until {@link #bound()} completes (at most 30 s); the bind failure, or null. Not on an event loop. */
    Throwable awaitBound() {
        try {
            bound.get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause() != null ? e.getCause() : e;
        } catch (TimeoutException e) {
            close();
            return new IOException("binding did not complete within 30 s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            return e;
        }
    }

    /**
     * The sockets start accepting (they were bound with auto-read off). On each socket's event
     * loop, and only once it is bound: a socket still binding turns auto-read on when its bind
     * completes. (Netty 4.2.18's io_uring server socket never accepts if auto-read is switched on
     * while its bind is in flight; epoll does not care.)
     */
    void startAccepting() {
        accepting = true;
        for (Channel c : channels) {
            c.eventLoop().execute(() -> {
                if (c.isActive()) {
                    c.config().setAutoRead(true);
                }
            });
        }
    }

    /** Closes every socket: no more accepts (connections already accepted are not touched). */
    void close() {
        closed = true;
        for (Channel c : channels) {
            c.close();
        }
    }

    /** The bound address (every socket has the same), or null before the first bind completed. */
    SocketAddress localAddress() {
        return channels.isEmpty() ? null : channels.get(0).localAddress();
    }

    /** How many sockets listen (one, or one per worker with SO_REUSEPORT). */
    int size() {
        return channels.size();
    }
}
