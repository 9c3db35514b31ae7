package io.sluice.server.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.resolver.AbstractAddressResolver;
import io.netty.resolver.AddressResolver;
import io.netty.resolver.AddressResolverGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Upstream connections for handler tests without sockets: a {@link Bootstrap} template whose
 * channels are {@link EmbeddedChannel}s registered on the downstream channel's embedded event loop,
 * so the pool under test builds its real upstream pipeline on them (decoder + upstream handler)
 * and the test plays the upstream server by reading what they wrote and writing responses in.
 *
 * <p>Connecting goes through this class's resolver: by default a connect succeeds at once; with
 * {@link #holdConnects} each one waits until the test {@link #failConnect fails} or
 * {@link #completeConnect completes} it (or forever: an upstream that never accepts).
 */
public final class EmbeddedUpstreams {

    /** Upstream channels in the order they were opened. */
    public final List<EmbeddedChannel> channels = new ArrayList<>();
    private final Deque<Promise<InetSocketAddress>> held = new ArrayDeque<>();
    private boolean hold;

    /** The template an upstream pool on {@code loop} clones for every connection. */
    public Bootstrap template(EventLoop loop) {
        return new Bootstrap()
                .group(loop)
                .channelFactory(() -> {
                    EmbeddedChannel ch = EmbeddedChannel.builder().register(false).build();
                    channels.add(ch);
                    return ch;
                })
                .resolver(new AddressResolverGroup<InetSocketAddress>() {
                    private final HoldingResolver resolver = new HoldingResolver(loop);

                    @Override
                    public AddressResolver<InetSocketAddress> getResolver(EventExecutor executor) {
                        return resolver; // not cached per executor: an embedded loop has no termination future
                    }

                    @Override
                    protected AddressResolver<InetSocketAddress> newResolver(EventExecutor executor) {
                        return resolver;
                    }
                });
    }

    /** From now on connects stay pending until the test decides. */
    public void holdConnects() {
        hold = true;
    }

    public int pendingConnects() {
        return held.size();
    }

    /** Fails the oldest pending connect with {@code cause}. */
    public void failConnect(Throwable cause) {
        held.removeFirst().setFailure(cause);
    }

    /** Lets the oldest pending connect go through. */
    public void completeConnect() {
        Promise<InetSocketAddress> p = held.removeFirst();
        p.setSuccess(loopback());
    }

    /** The last upstream channel opened. */
    public EmbeddedChannel last() {
        return channels.get(channels.size() - 1);
    }

    /** Everything {@code ch} wrote so far, as text (buffers released). */
    public static String drainText(EmbeddedChannel ch) {
        StringBuilder sb = new StringBuilder();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            if (o instanceof ByteBuf b) {
                sb.append(b.toString(StandardCharsets.ISO_8859_1));
            }
            ReferenceCountUtil.release(o);
        }
        return sb.toString();
    }

    /** Closes and releases every upstream channel; true if any still held unread messages. */
    public boolean finishAll() {
        boolean left = false;
        for (EmbeddedChannel ch : channels) {
            left |= ch.finishAndReleaseAll();
        }
        return left;
    }

    private static InetSocketAddress loopback() {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(new byte[]{127, 0, 0, 1}), 9);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private final class HoldingResolver extends AbstractAddressResolver<InetSocketAddress> {

        HoldingResolver(EventExecutor executor) {
            super(executor, InetSocketAddress.class);
        }

        @Override
        protected boolean doIsResolved(InetSocketAddress address) {
            return !address.isUnresolved();
        }

        @Override
        protected void doResolve(InetSocketAddress unresolved, Promise<InetSocketAddress> promise) {
            if (hold) {
                held.add(promise);
            } else {
                promise.setSuccess(loopback());
            }
        }

        @Override
        protected void doResolveAll(InetSocketAddress unresolved, Promise<List<InetSocketAddress>> promise) {
            promise.setSuccess(List.of(loopback()));
        }
    }
}
