package io.sluice.server.bolt;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.sluice.codec.bolt.BoltDecodeError;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltProtocol;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.codec.bolt.BoltType;
import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.tls.upstream.UpstreamTls;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;
import io.sluice.server.tls.upstream.UpstreamTlsException;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One multiplexed connection to an upstream bolt server, and the last handler of its pipeline
 * ({@code [upstream-meter →] bolt-upstream-decoder → bolt-upstream}, see
 * {@link io.sluice.server.channel.SluicePipeline}; frames are written as their bytes, no encoder). Many downstream
 * connections of the same event loop share it. Each two-way request gets a fresh id from this
 * connection's counter (skipping ids still pending after wrap-around), rewritten in place in the
 * request's own bytes; the {@link Pending} entry (recycled, held in a {@link PendingTable}) maps
 * the id back to the caller. Oneway frames are forwarded as they are and not tracked.
 *
 * <p>Timeouts: one timer per connection, armed for the earliest deadline of what is pending (the
 * table keeps deadline-ordered lists), instead of a scheduled task per request; it runs on the
 * listener's {@link Scheduler} for this loop, so a request times out exactly at its deadline on
 * that scheduler's clock.
 *
 * <p>Lifecycle: opened lazily by {@link BoltUpstreamPool}; frames written while it connects wait
 * in a bounded queue. When it closes (or cannot connect), every pending request fails at once:
 * CONNECTION_CLOSED if the connection was lost, ERROR_COMM if it never came up. It writes a
 * heartbeat after {@link #KEEPALIVE_NANOS} to 1.5 × that without traffic (a periodic check of a
 * flag the data path sets, rather than Netty's {@code IdleStateHandler}, which costs a promise and
 * a listener per write), well inside bolt's 90 s server idle timeout; the acks are dropped.
 *
 * <p>Backpressure: a downstream handler whose write found this connection unwritable (or still
 * connecting) registers with {@link #block} and stops reading its client until this connection
 * can take more. Event loop only; no locks.
 */
final class BoltUpstreamConnection extends ChannelInboundHandlerAdapter {

    /** Two-way requests in flight on one upstream connection; more are answered SERVER_THREADPOOL_BUSY. */
    static final int MAX_PENDING = 32_768;
    /** Frames held while connecting, by count and bytes; more are answered SERVER_THREADPOOL_BUSY. */
    static final int MAX_QUEUED_FRAMES = 4096;
    static final long MAX_QUEUED_BYTES = 64L << 20;
    /** Idle time after which a heartbeat keeps the connection alive (bolt servers close after 90 s). */
    static final long KEEPALIVE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private enum State { CONNECTING, ACTIVE, CLOSED }

    private final BoltUpstreamPool pool;
    private final Host host;
    private final ClusterBalancer cluster;
    private final BoltFraming framing;
    private final int maxFrameLength;
    private final PendingTable pending = new PendingTable(64);
    private final ArrayDeque<BoltFrame> queued = new ArrayDeque<>();
    private final List<PendingListener> blocked = new ArrayList<>();
    private final Runnable flushTask = this::flushNow;
    /** Set by every frame read or written; cleared by the periodic keep-alive check. */
    private boolean traffic;
    private int quietChecks;
    /** Every half keep-alive period while active: {@link #checkKeepAlive}. */
    private final ConnectionTimer keepAliveTimer;
    private final Scheduler scheduler;
    private final Ticker ticker;
    /** The timer for the earliest pending deadline, on {@link #ticker}. */
    private final ConnectionTimer sweepTimer;
    private Channel channel;
    private State state = State.CONNECTING;
    private long queuedBytes;
    private boolean flushScheduled;
    private boolean closeWhenIdle;

    BoltUpstreamConnection(BoltUpstreamPool pool, Host host, ClusterBalancer cluster, BoltFraming framing,
                           int maxFrameLength, Scheduler scheduler) {
        this.pool = pool;
        this.scheduler = scheduler;
        this.ticker = scheduler.ticker();
        this.sweepTimer = new ConnectionTimer(scheduler, this::sweep);
        this.keepAliveTimer = new ConnectionTimer(scheduler, this::onKeepAliveTimer);
        this.host = host;
        this.cluster = cluster;
        this.framing = framing;
        this.maxFrameLength = maxFrameLength;
    }

    Host host() {
        return host;
    }

    boolean isClosed() {
        return state == State.CLOSED;
    }

    /** Whether a frame written now goes out without piling up (a closed connection fails fast, so it counts as writable). */
    boolean isWritable() {
        return state == State.ACTIVE ? channel.isWritable() : state == State.CLOSED;
    }

    int pendingCount() {
        return pending.size();
    }

    /**
     * @param meter the cluster's connection-counting handler, or null
     * @param tlsContexts the clusters' upstream TLS (used when the cluster has a tls block), or null
     */
    void connect(Bootstrap bootstrap, ChannelHandler meter, UpstreamTlsContexts tlsContexts) {
        BoltUpstreamConnection self = this;
        ClusterConfig cc = cluster.config();
        UpstreamTls tls = cc.tls() == null ? null : UpstreamTlsContexts.lookup(tlsContexts, cc);
        Bootstrap b = bootstrap.clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        (int) Math.min(Integer.MAX_VALUE, cluster.config().connectTimeout().toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (meter != null) {
                            ch.pipeline().addLast(SluicePipeline.UPSTREAM_METER, meter);
                        }
                        if (tls != null) {
                            tls.addHandler(ch, host, cc.connectTimeout());
                        }
                        ch.pipeline()
                                .addLast(SluicePipeline.BOLT_UPSTREAM_DECODER, new BoltFrameDecoder(maxFrameLength))
                                .addLast(SluicePipeline.BOLT_UPSTREAM, self);
                    }
                });
        ChannelFuture f = b.connect(host.host(), host.port());
        channel = f.channel();
        if (cc.tls() != null) { // TLS: active once the handshake succeeded
            f = UpstreamTls.handshake(tls, f, host, cluster.name());
        }
        f.addListener(this::onConnected);
    }

    private void onConnected(Future<? super Void> f) {
        if (state != State.CONNECTING) {
            return; // closed while connecting
        }
        if (!f.isSuccess()) {
            boolean timeout = f.cause() instanceof ConnectTimeoutException;
            String tlsFailure = UpstreamTlsException.describe(f.cause()); // upstream TLS: the handshake's failure reason
            terminate(BoltStatus.ERROR_COMM, tlsFailure != null ? tlsFailure : (timeout ? "timed out connecting to " : "cannot connect to ")
                            + host.address() + " of cluster " + cluster.name(),
                    timeout ? RequestOutcome.CONNECT_TIMEOUT : RequestOutcome.CONNECT_FAILURE, Outcome.CONNECT_FAILURE);
            return;
        }
        state = State.ACTIVE;
        keepAliveTimer.armIn(KEEPALIVE_NANOS / 2);
        BoltFrame frame;
        while ((frame = queued.poll()) != null) {
            // a two-way request that timed out while we connected is not sent
            if (frame.type() == BoltType.REQUEST && frame.cmdCode() != BoltProtocol.CMD_HEARTBEAT
                    && pending.get(frame.requestId()) == null) {
                frame.release();
            } else {
                channel.write(frame.takeBytes(), channel.voidPromise());
            }
        }
        queuedBytes = 0;
        channel.flush();
        wakeBlocked();
    }

    /** Whether a frame sent now would be refused (closed, too much pending, or the connect queue full). */
    private boolean saturated() {
        return state == State.CLOSED || pending.size() >= MAX_PENDING
                || (state == State.CONNECTING && (queued.size() >= MAX_QUEUED_FRAMES || queuedBytes >= MAX_QUEUED_BYTES));
    }

    /**
     * Sends the two-way request {@code frame} upstream under a fresh id, tracked for {@code r.owner}
     * until its response, its timeout ({@code r.startNanos + r.timeoutNanos} on the gateway's ticker) or
     * the connection's end. On success this connection owns the frame; on {@code false} (saturated)
     * the caller still does and must answer SERVER_THREADPOOL_BUSY.
     */
    boolean send(BoltFrame frame, BoltRequest r) {
        if (saturated()) {
            return false;
        }
        Pending p = pending.obtain();
        p.set(r, r.hasOriginalId ? r.originalId : frame.requestId(), frame.framing()); // a retry: the client's id
        int id = pending.add(p);
        frame.rewriteRequestId(id);
        sweepTimer.arm(p.deadlineNanos); // nothing to do unless it is the earliest deadline
        write(frame);
        return true;
    }

    /** Sends a oneway frame untracked, as it is. Ownership as for {@link #send}. */
    boolean sendOneway(BoltFrame frame) {
        if (saturated()) {
            return false;
        }
        write(frame);
        return true;
    }

    private void write(BoltFrame frame) {
        traffic = true;
        if (state == State.ACTIVE) {
            channel.write(frame.takeBytes(), channel.voidPromise());
            scheduleFlush();
        } else {
            queued.add(frame);
            queuedBytes += frame.frameLength();
        }
    }

    /** {@code h} stops reading its client until this connection is writable again (or closed). */
    void block(PendingListener h) {
        blocked.add(h);
    }

    private void wakeBlocked() {
        if (blocked.isEmpty()) {
            return;
        }
        PendingListener[] waiting = blocked.toArray(new PendingListener[0]);
        blocked.clear();
        for (PendingListener h : waiting) {
            h.upstreamWritable(this);
        }
    }

    private void scheduleFlush() {
        if (!flushScheduled) {
            flushScheduled = true;
            pool.loop().execute(flushTask); // one flush per loop iteration for all writers
        }
    }

    private void flushNow() {
        flushScheduled = false;
        if (state == State.ACTIVE) {
            channel.flush();
        }
    }

    /** The sweep timer fired: fail what is past its deadline, re-arm for the next one. */
    private void sweep() {
        long now = ticker.nanoTime();
        Pending p;
        while ((p = pending.pollExpired(now)) != null) {
            p.owner.onFailed(p, BoltStatus.TIMEOUT, "no response from " + host.address() + " of cluster " + cluster.name()
                    + " within " + TimeUnit.NANOSECONDS.toMillis(p.timeoutNanos) + " ms", RequestOutcome.UPSTREAM_TIMEOUT,
                    Outcome.TIMEOUT);
            pending.recycle(p);
        }
        if (!pending.isEmpty() && state != State.CLOSED) {
            sweepTimer.arm(pending.earliestDeadline());
        }
        closeIfIdleAndAsked();
    }

    // ---------------------------------------------------------------- upstream events

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        traffic = true;
        if (msg instanceof BoltFrame f) {
            if (f.type() != BoltType.RESPONSE || f.isHeartbeat()) {
                f.release(); // heartbeat acks, and requests a server has no business sending
                return;
            }
            Pending p = pending.remove(f.requestId());
            if (p == null) {
                f.release(); // late (timed out) or unknown: dropped, as bolt clients do
                return;
            }
            p.owner.onResponse(p, f);
            pending.recycle(p); // the timer stays armed: it re-arms itself for whatever is then earliest
            closeIfIdleAndAsked();
        } else if (msg instanceof BoltDecodeError e) {
            if (e.recoverable()) {
                Pending p = e.hasRequestId() && e.type() == BoltType.RESPONSE ? pending.remove(e.requestId()) : null;
                if (p != null) {
                    p.owner.onFailed(p, BoltStatus.CODEC_EXCEPTION, "response from " + host.address() + " rejected: "
                            + e.message(), RequestOutcome.CODEC_ERROR, null);
                    pending.recycle(p);
                }
            } else {
                ctx.close(); // out of sync: everything pending fails with CONNECTION_CLOSED
            }
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            wakeBlocked();
        }
        ctx.fireChannelWritabilityChanged();
    }

    private void onKeepAliveTimer() {
        checkKeepAlive();
        if (state == State.ACTIVE) {
            keepAliveTimer.armIn(KEEPALIVE_NANOS / 2);
        }
    }

    /** Every half keep-alive period: after two quiet checks in a row, a heartbeat (or, if the host left the cluster, closing). */
    private void checkKeepAlive() {
        if (traffic) {
            traffic = false;
            quietChecks = 0;
            return;
        }
        if (++quietChecks < 2 || state != State.ACTIVE) {
            return;
        }
        quietChecks = 0;
        if (!cluster.hosts().contains(host)) {
            closeWhenIdle(); // the host left the cluster (reload): let the connection go
            return;
        }
        channel.writeAndFlush(BoltFrames.heartbeat(channel.alloc(), framing, pending.nextFreeId()).takeBytes(),
                channel.voidPromise());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        terminate(BoltStatus.CONNECTION_CLOSED, "upstream " + host.address() + " of cluster " + cluster.name()
                + " closed the connection", RequestOutcome.UPSTREAM_RESET, Outcome.RESET);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // resets and write failures: channelInactive fails what is pending
    }

    // ---------------------------------------------------------------- closing

    /** Closes once nothing is pending (the pool shrank). */
    void closeWhenIdle() {
        closeWhenIdle = true;
        closeIfIdleAndAsked();
    }

    private void closeIfIdleAndAsked() {
        if (closeWhenIdle && pending.isEmpty() && queued.isEmpty()) {
            close();
        }
    }

    /** Closes now; pending requests fail with CONNECTION_CLOSED. */
    void close() {
        terminate(BoltStatus.CONNECTION_CLOSED, "gateway closed the connection to " + host.address(),
                RequestOutcome.UPSTREAM_RESET, null);
        if (channel != null) {
            channel.close();
        }
    }

    /** Fails everything this connection holds, once; the pool forgets it. */
    private void terminate(int status, String message, RequestOutcome outcome, Outcome hostOutcome) {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        pool.closed(this);
        keepAliveTimer.cancel();
        BoltFrame f;
        while ((f = queued.poll()) != null) {
            f.release();
        }
        queuedBytes = 0;
        sweepTimer.cancel();
        Pending p;
        while ((p = pending.pollAny()) != null) {
            p.owner.onFailed(p, status, message, outcome, hostOutcome);
            pending.recycle(p);
        }
        wakeBlocked();
    }
}
