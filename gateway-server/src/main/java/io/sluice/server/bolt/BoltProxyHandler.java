package io.sluice.server.bolt;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.bolt.BoltDecodeError;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.codec.bolt.BoltType;
import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.Hashing;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.DrainEvent;
import io.sluice.server.channel.RequestEnd;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.policy.ratelimit.RouteLimits;
import io.sluice.server.policy.ClusterPolicies;
import io.sluice.server.policy.breaker.CircuitBreaker;
import io.sluice.server.policy.retry.RetryPolicy;
import io.sluice.server.policy.retry.RetryState;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTraffic;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The downstream end of a Bolt client connection: {@code bolt-proxy}, the last handler of
 * {@code [meter →] bolt-decoder → bolt-proxy} ({@link io.sluice.server.channel.SluicePipeline}). Requests are
 * multiplexed: each is routed on its {@code service} header (else {@code sofa_head_target_service})
 * and {@code sofa_head_method_name}, falling back to the listener's default cluster; a host is
 * picked and the frame goes, bytes unchanged but for its request id, to a shared upstream
 * connection of this event loop ({@link BoltUpstreamConnection}). The response comes back with
 * the original id restored, in the client's framing. Heartbeats are answered here and never
 * forwarded; oneway requests are forwarded untracked.
 *
 * <p>Failures are answered with the gateway's own response, always with a non-empty body: no
 * route or no available host → NO_PROCESSOR, too much in flight → SERVER_THREADPOOL_BUSY, no
 * response in time (the request's own timeout capped by the route's / cluster's) → TIMEOUT,
 * upstream lost → CONNECTION_CLOSED, upstream unreachable → ERROR_COMM, malformed frame →
 * CODEC_EXCEPTION (then the connection closes unless only the frame was too large).
 *
 * <p>Backpressure: the client is not read while this connection cannot take its responses
 * (channel unwritable), while an upstream connection it wrote to cannot take more, or while it has
 * the listener's {@code max_in_flight_per_connection} requests in flight; so memory is bounded by
 * in-flight requests. Requests beyond that limit that were read together with the last admitted
 * one are answered SERVER_THREADPOOL_BUSY at once.
 *
 * <p>Idle clients: a connection with no traffic (no frame read or written, nothing in flight) for
 * the listener's {@code idle_timeout} is closed. One periodic check every quarter of the timeout
 * looks at a flag the data path sets, so the close comes 1 to 1.25 timeouts after the last traffic
 * and the data path pays no clock read, promise or listener per frame.
 *
 * <p>Buffer ownership: every frame read is written (upstream or, for heartbeats and errors, an
 * answer downstream) or released here. Everything runs on this connection's event loop.
 */
final class BoltProxyHandler extends ChannelInboundHandlerAdapter implements PendingListener {

    /** Idle checks per idle timeout: a connection is idle after this many quiet checks in a row. */
    static final int IDLE_CHECKS = 4;

    private final BoltListenerContext lc;
    /** Two-way requests in flight at which reading pauses; more, already read, are answered SERVER_THREADPOOL_BUSY. */
    private final int maxInFlight;
    private final Runnable flushTask = this::flushNow;
    /** Header lookups of the frame being routed, for routes that match on headers (one instance, no per-request lambda). */
    private BoltFrame routing;
    private final Function<String, String> routedHeaders = name -> this.routing.header(name);
    /** The last {@code service} value seen on this connection: a repeat is recognised in place, not decoded again. */
    private String lastService;
    private ChannelHandlerContext ctx;
    private BoltUpstreamPool pool;
    private Scheduler scheduler;
    private Ticker ticker;
    private int inFlight;
    private boolean closed;
    private boolean draining;
    private boolean flushScheduled;
    private BoltUpstreamConnection blockedOn;
    /** Set by every frame read or written; cleared by the periodic idle check. */
    private boolean traffic;
    private int quietChecks;
    /** Every quarter idle timeout: {@link #checkIdle}. */
    private ConnectionTimer idleTimer;
    private long idleCheckNanos;

    /** What an upstream connection is told about the request being sent; refilled per request. */
    private final BoltRequest request = new BoltRequest(this);
    /** This connection's request-end event, refilled for every request it finishes. */
    private final RequestEnd end;
    /** The client's address for the access log, worked out once per connection. */
    private String client;
    // ---- resilience: the policies of the last cluster used (a lookup only when the cluster changes), the picker
    private ClusterBalancer lastCluster;
    private ClusterPolicies lastPolicies;
    private final RetryState picker = new RetryState();
    /** The attempts of the request being ended (set just before {@link #ended}). */
    private int endAttempts = 1;

    BoltProxyHandler(BoltListenerContext lc) {
        this.lc = lc;
        this.end = new RequestEnd(lc.name(), "bolt", false);
        this.maxInFlight = lc.options().maxInFlight();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.pool = lc.pool(ctx.executor());
        this.scheduler = lc.scheduler(ctx.executor());
        this.ticker = scheduler.ticker();
        this.idleTimer = new ConnectionTimer(scheduler, this::onIdleTimer);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        lc.metrics().connectionOpened();
        if (lc.draining()) {
            draining = true;
        }
        idleCheckNanos = lc.options().idleTimeout().toNanos() / IDLE_CHECKS;
        if (idleCheckNanos > 0) {
            idleTimer.armIn(idleCheckNanos);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        blockedOn = null;
        idleTimer.cancel();
        lc.metrics().connectionClosed();
        // requests still in flight finish (and are counted) when their response or timeout comes
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        traffic = true;
        if (msg instanceof BoltDecodeError e) {
            onDecodeError(e);
            return;
        }
        if (!(msg instanceof BoltFrame f) || closed) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (f.type() == BoltType.RESPONSE) {
            f.release(); // clients do not answer the gateway
        } else if (f.isHeartbeat()) {
            if (f.type() == BoltType.REQUEST) {
                write(BoltFrames.heartbeatAck(ctx.alloc(), f));
            }
            f.release();
        } else {
            onRequest(f);
        }
    }

    /** The current request's "service#method" for the access log (null when it is off). */
    private String target;
    /** SOFATracer's trace id of the frame being routed (only while the access log is on), or null. */
    private String traceId;
    /** The current request's route (null: none or the default cluster), for its meters. */
    private Route route;

    private void onRequest(BoltFrame f) {
        long start = ticker.nanoTime();
        target = null;
        traceId = null;
        route = null;
        lc.metrics().requestStarted();
        boolean oneway = f.isOneway();
        if (!oneway && inFlight >= maxInFlight) {
            reject(f, BoltStatus.SERVER_THREADPOOL_BUSY, "more than " + maxInFlight
                            + " requests in flight on this connection (max_in_flight_per_connection)",
                    RequestOutcome.OVERLOADED, start);
            return;
        }
        String service = f.service(lastService);
        if (service == null) {
            service = f.targetService();
        } else {
            lastService = service;
        }
        if (lc.accessLog() != null) {
            target = (service == null ? "-" : service) + (f.methodName() == null ? "" : "#" + f.methodName());
            traceId = SofaTrace.traceId(f); // traffic: the trace id in the access log
        }
        routing = f;
        route = lc.routes().routeBolt(service, f.methodName(), routedHeaders);
        RouteLimits limits = route == null ? null : route.rateLimits(); // rate limit hook (docs/rate-limits.md)
        long wait = limits == null ? RouteLimits.ALLOWED
                : limits.decideBolt(routedHeaders, ctx.channel().remoteAddress(), service, f.methodName());
        routing = null;
        if (wait != RouteLimits.ALLOWED) {
            reject(f, BoltStatus.SERVER_THREADPOOL_BUSY, "rate limited on route " + route.name() + "; retry after "
                    + RouteLimits.retryAfterSeconds(wait) + " s", RequestOutcome.RATE_LIMITED, start);
            return;
        }
        ClusterBalancer cluster;
        long capNanos;
        long key = Hashing.NO_KEY;
        if (route != null) {
            cluster = route.cluster();
            capNanos = route.timeoutNanos();
            RouteTraffic traffic = route.traffic();
            if (traffic != null) { // weighted clusters, hash balancing (docs/traffic.md)
                routing = f;
                key = traffic.key(routedHeaders, service, this::client);
                routing = null;
                cluster = traffic.cluster(cluster, key);
            }
        } else {
            cluster = lc.defaultCluster();
            if (cluster != null && cluster.routesByService()) { // route by registry (docs/discovery.md)
                cluster = cluster.child(service);
                if (cluster == null) {
                    reject(f, BoltStatus.NO_PROCESSOR, "service " + service + ": no providers discovered yet",
                            RequestOutcome.NO_ROUTE, start);
                    return;
                }
            }
            if (cluster == null) {
                reject(f, BoltStatus.NO_PROCESSOR, "no route for service " + service
                        + (f.methodName() == null ? "" : " method " + f.methodName()), RequestOutcome.NO_ROUTE, start);
                return;
            }
            capNanos = cluster.config().responseTimeout().toNanos();
        }
        // ---- resilience: the cluster's max_requests breaker and the per-host limit
        ClusterPolicies policies = route != null ? route.policiesFor(cluster) : policiesOf(cluster);
        RetryPolicy retryPolicy = oneway ? null : route != null ? route.retryPolicy() : policies.clusterRetryPolicy();
        CircuitBreaker breaker = policies.breaker();
        if (!oneway && !breaker.tryRequest()) {
            reject(f, BoltStatus.SERVER_THREADPOOL_BUSY, "cluster " + cluster.name()
                    + " is at its max_requests limit (circuit breaker)", RequestOutcome.OVERLOADED, start);
            return;
        }
        picker.begin(null, policies);
        Host host = picker.pick(cluster, key);
        boolean hostsFull = picker.pickOverflowed();
        picker.end(false);
        if (host == null) {
            if (!oneway) {
                breaker.requestDone();
            }
            if (hostsFull) {
                reject(f, BoltStatus.SERVER_THREADPOOL_BUSY, "every host of cluster " + cluster.name()
                        + " is at its max_host_requests limit (circuit breaker)", RequestOutcome.OVERLOADED, start);
                return;
            }
            reject(f, BoltStatus.NO_PROCESSOR, "no available host in cluster " + cluster.name(),
                    RequestOutcome.NO_HEALTHY_HOST, start);
            return;
        }
        // ---- end resilience
        BoltUpstreamConnection up = pool.acquire(host, cluster, f.framing());
        if (oneway) {
            boolean sent = up.sendOneway(f);
            if (!sent) {
                f.release();
            }
            RequestOutcome o = sent ? RequestOutcome.PROXIED : RequestOutcome.OVERLOADED;
            ended(route, o, 0, host, target, traceId, ticker.nanoTime() - start);
        } else {
            int t = f.timeoutMillis();
            long timeout = t > 0 ? Math.min(TimeUnit.MILLISECONDS.toNanos(t), capNanos) : capNanos;
            BoltRequest r = request;
            r.startNanos = start;
            r.timeoutNanos = timeout;
            // ---- resilience: keep the frame to replay it (within max_body_bytes), per-try timeout
            r.retryPolicy = retryPolicy;
            r.replay = null;
            r.attempt = 1;
            r.hasOriginalId = false;
            r.retrySlot = false;
            r.overallDeadlineNanos = start + timeout;
            if (retryPolicy != null) {
                if (f.frameLength() <= retryPolicy.maxBodyBytes()) {
                    r.replay = f.retainedDuplicate();
                } else {
                    policies.bodyTooLarge.increment();
                }
                if (retryPolicy.perTryTimeoutNanos() != 0) {
                    r.timeoutNanos = Math.min(timeout, retryPolicy.perTryTimeoutNanos());
                }
            }
            r.host = host;
            r.cluster = cluster;
            r.target = target;
            r.traceId = traceId;
            r.route = route;
            r.policies = policies;
            if (!up.send(f, r)) {
                breaker.requestDone();
                if (r.replay != null) {
                    r.replay.release();
                    r.replay = null;
                }
                reject(f, BoltStatus.SERVER_THREADPOOL_BUSY, "upstream connection to " + host.address()
                        + " is saturated", RequestOutcome.OVERLOADED, start);
                return;
            }
            host.requestStarted();
            inFlight++;
        }
        if (!up.isWritable() && blockedOn != up) {
            blockedOn = up;
            up.block(this);
        }
        updateRead();
    }

    /** Answers {@code f} (unless oneway) with an error and releases it. */
    private void reject(BoltFrame f, int status, String message, RequestOutcome outcome, long start) {
        if (f.type() == BoltType.REQUEST) {
            write(BoltFrames.errorResponse(ctx.alloc(), f, status, message));
        }
        f.release();
        ended(route, outcome, status, null, target, traceId, ticker.nanoTime() - start);
    }

    /**
     * The request ended: one {@link RequestEnd} to the listener (metrics, access log). Bolt statuses
     * go to the access log only; the request meters carry no status class for Bolt.
     */
    private void ended(Route r, RequestOutcome outcome, int status, Host host, String what, String trace, long durationNanos) {
        RequestEnd e = end.reset();
        e.attempts = Math.max(1, endAttempts); // resilience: 1 + retries
        endAttempts = 1;
        e.route = r;
        e.outcome = outcome;
        e.status = status;
        e.host = host;
        e.target = what;
        e.durationNanos = durationNanos;
        if (lc.accessLog() != null) {
            e.client = client();
            e.traceId = trace;
        }
        lc.requestEnded(e);
    }

    private String client() {
        String c = client;
        if (c == null) {
            c = ctx.channel().remoteAddress() instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : "-";
            client = c;
        }
        return c;
    }

    private void onDecodeError(BoltDecodeError e) {
        if (closed || !ctx.channel().isActive()) {
            return; // e.g. a frame cut short by the client closing: nobody to answer
        }
        if (e.answerable()) {
            lc.metrics().requestStarted();
            write(BoltFrames.codecErrorResponse(ctx.alloc(), e));
            ended(null, RequestOutcome.CODEC_ERROR, BoltStatus.CODEC_EXCEPTION, null, null, null, 0);
        }
        if (!e.recoverable()) {
            closeAfterFlush(); // the stream is out of sync
        }
    }

    // ---------------------------------------------------------------- completions (called by upstream connections)

    @Override
    public void onResponse(Pending p, BoltFrame response) {
        int status = response.status();
        if (p.replay != null && (status == BoltStatus.SERVER_THREADPOOL_BUSY || status == BoltStatus.ERROR_COMM)
                && p.retryPolicy.retriesBoltStatus(status == BoltStatus.ERROR_COMM, status == BoltStatus.SERVER_THREADPOOL_BUSY)
                && retry(p, Outcome.SERVER_ERROR)) {
            response.release();
            return;
        }
        if (p.attempt > 1 && status == BoltStatus.SUCCESS && p.policies != null) {
            p.policies.retrySuccess.increment();
        }
        endAttempts = p.attempt;
        finishPending(p);
        p.cluster.onOutcome(p.host, hostOutcome(status));
        ended(p.route, closed ? RequestOutcome.CLIENT_CLOSED : RequestOutcome.PROXIED, status, p.host, p.target, p.traceId,
                ticker.nanoTime() - p.startNanos);
        if (closed) {
            response.release();
        } else {
            if (status != BoltStatus.SUCCESS && response.bodyLength() == 0 && BoltStatus.isDefined(status)) {
                // e.g. bolt's own SERVER_THREADPOOL_BUSY: give it a body, or sofaload never completes it
                response.release();
                write(BoltFrames.errorResponse(ctx.alloc(), p.framing, p.originalId, status,
                        "upstream " + p.host.address() + " answered " + BoltStatus.name(status)));
            } else {
                response.rewriteRequestId(p.originalId);
                write(response);
            }
        }
        afterCompletion();
    }

    @Override
    public void onFailed(Pending p, int status, String message, RequestOutcome outcome, Outcome hostOutcome) {
        if (p.replay != null) { // ---- resilience: retries
            RetryPolicy.Failure f = switch (status) {
                case BoltStatus.ERROR_COMM -> RetryPolicy.Failure.CONNECT_FAILURE;
                case BoltStatus.CONNECTION_CLOSED -> RetryPolicy.Failure.RESET;
                case BoltStatus.TIMEOUT -> RetryPolicy.Failure.TIMEOUT;
                default -> null;
            };
            if (f != null && p.retryPolicy.retriesBolt(f)
                    && (f != RetryPolicy.Failure.TIMEOUT || ticker.nanoTime() - p.overallDeadlineNanos < 0)
                    && retry(p, hostOutcome)) {
                return;
            }
        }
        endAttempts = p.attempt;
        finishPending(p);
        if (hostOutcome != null) {
            p.cluster.onOutcome(p.host, hostOutcome);
        }
        if (!closed) {
            write(BoltFrames.errorResponse(ctx.alloc(), p.framing, p.originalId, status, message));
        }
        ended(p.route, closed ? RequestOutcome.CLIENT_CLOSED : outcome, status, p.host, p.target, p.traceId,
                ticker.nanoTime() - p.startNanos);
        afterCompletion();
    }

    @Override
    public void upstreamWritable(BoltUpstreamConnection up) {
        if (blockedOn == up) {
            blockedOn = null;
            updateRead();
        }
    }

    private void finishPending(Pending p) {
        inFlight--;
        p.host.requestFinished();
        // ---- resilience: the max_requests slot, the retry slot, the replay copy
        if (p.policies != null) {
            p.policies.breaker().requestDone();
            if (p.retrySlot) {
                p.retrySlot = false;
                p.policies.breaker().retryDone();
            }
        }
        if (p.replay != null) {
            p.replay.release();
            p.replay = null;
        }
    }

    // ---------------------------------------------------------------- resilience: Bolt retries

    /**
     * Tries the failed attempt {@code p} again if attempts are left, the back-off ends before the
     * request's deadline and the retry budget allows it: the request stays in flight (its
     * max_requests slot held), the frame kept at send time is copied and sent after the back-off
     * to a host not tried, under the client's request id. False: the caller answers the failure.
     * The entry {@code p} is recycled when this returns; what the retry needs is copied out.
     */
    private boolean retry(Pending p, Outcome hostOutcome) {
        RetryPolicy pol = p.retryPolicy;
        ClusterPolicies cp = p.policies;
        if (closed || cp == null) {
            return false;
        }
        if (p.attempt > pol.numRetries()) {
            cp.retryLimitExceeded.increment();
            return false;
        }
        long delay = pol.backoffNanos(p.attempt, lc.retryJitter());
        long now = ticker.nanoTime();
        if (now + delay - p.overallDeadlineNanos >= 0) {
            return false;
        }
        if (p.retrySlot) {
            p.retrySlot = false;
            cp.breaker().retryDone();
        }
        if (!cp.breaker().tryRetry()) {
            cp.retryOverflow.increment();
            return false;
        }
        cp.retries.increment();
        if (hostOutcome != null) {
            p.cluster.onOutcome(p.host, hostOutcome);
        }
        p.host.requestFinished();
        BoltRetry next = new BoltRetry(p);
        p.replay = null; // the retry owns it now
        p.policies = null; // the slots travel with the retry
        scheduler.schedule(() -> resend(next), delay);
        return true;
    }

    /** The back-off is over: the next attempt, on another host when there is one. */
    private void resend(BoltRetry t) {
        BoltFrame frame = t.replay.copy(); // fresh bytes: the old attempt's may still sit in a buffer
        t.replay.release();
        if (closed) {
            frame.release();
            endRetry(t, RequestOutcome.CLIENT_CLOSED, 0, null);
            return;
        }
        picker.begin(t.policy, t.policies);
        picker.exclude(t.lastHost);
        Host host = picker.pick(t.cluster);
        picker.end(false);
        if (host == null) {
            frame.release();
            write(BoltFrames.errorResponse(ctx.alloc(), t.framing, t.originalId, BoltStatus.NO_PROCESSOR,
                    "no host of cluster " + t.cluster.name() + " left to retry on"));
            endRetry(t, RequestOutcome.NO_HEALTHY_HOST, BoltStatus.NO_PROCESSOR, null);
            return;
        }
        long now = ticker.nanoTime();
        long left = t.overallDeadlineNanos - now;
        long perTry = t.policy.perTryTimeoutNanos();
        BoltRequest r = request;
        r.startNanos = t.startNanos;
        r.timeoutNanos = now - t.startNanos + (perTry != 0 ? Math.min(left, perTry) : left);
        r.host = host;
        r.cluster = t.cluster;
        r.target = t.target;
        r.traceId = t.traceId;
        r.route = t.route;
        r.policies = t.policies;
        r.retryPolicy = t.policy;
        r.attempt = t.attempt;
        r.overallDeadlineNanos = t.overallDeadlineNanos;
        r.hasOriginalId = true;
        r.originalId = t.originalId;
        r.retrySlot = true;
        r.replay = t.attempt <= t.policy.numRetries() ? frame.retainedDuplicate() : null;
        BoltUpstreamConnection up = pool.acquire(host, t.cluster, t.framing);
        boolean sent = up.send(frame, r);
        r.hasOriginalId = false;
        if (!sent) {
            if (r.replay != null) {
                r.replay.release();
                r.replay = null;
            }
            frame.release();
            write(BoltFrames.errorResponse(ctx.alloc(), t.framing, t.originalId, BoltStatus.SERVER_THREADPOOL_BUSY,
                    "upstream connection to " + host.address() + " is saturated"));
            endRetry(t, RequestOutcome.OVERLOADED, BoltStatus.SERVER_THREADPOOL_BUSY, host);
            return;
        }
        host.requestStarted();
    }

    /** A retry that could not be sent ends the request: slots back, one request end. */
    private void endRetry(BoltRetry t, RequestOutcome outcome, int status, Host host) {
        inFlight--;
        t.policies.breaker().requestDone();
        t.policies.breaker().retryDone();
        ended(t.route, outcome, status, host, t.target, t.traceId, ticker.nanoTime() - t.startNanos);
        afterCompletion();
    }

    /** What a scheduled Bolt retry carries from the failed attempt (allocated per retry only). */
    private static final class BoltRetry {
        final BoltFrame replay;
        final io.sluice.codec.bolt.BoltFraming framing;
        final int originalId;
        final long startNanos;
        final long overallDeadlineNanos;
        final int attempt;
        final ClusterBalancer cluster;
        final Host lastHost;
        final String target;
        final String traceId;
        final Route route;
        final ClusterPolicies policies;
        final RetryPolicy policy;

        BoltRetry(Pending p) {
            replay = p.replay;
            framing = p.framing;
            originalId = p.originalId;
            startNanos = p.startNanos;
            overallDeadlineNanos = p.overallDeadlineNanos;
            attempt = p.attempt + 1;
            cluster = p.cluster;
            lastHost = p.host;
            target = p.target;
            traceId = p.traceId;
            route = p.route;
            policies = p.policies;
            policy = p.retryPolicy;
        }
    }

    /** The policies of {@code c}, looked up only when the cluster differs from the last one's. */
    private ClusterPolicies policiesOf(ClusterBalancer c) {
        if (c != lastCluster) {
            lastPolicies = ClusterPolicies.of(c);
            lastCluster = c;
        }
        return lastPolicies;
    }

    private void afterCompletion() {
        if (closed) {
            return;
        }
        if (draining && inFlight == 0) {
            closeDrained();
        } else if (inFlight == maxInFlight - 1) {
            updateRead();
        }
    }

    private static Outcome hostOutcome(int status) {
        return switch (status) {
            case BoltStatus.ERROR, BoltStatus.UNKNOWN, BoltStatus.SERVER_THREADPOOL_BUSY, BoltStatus.ERROR_COMM,
                 BoltStatus.TIMEOUT -> Outcome.SERVER_ERROR;
            default -> Outcome.SUCCESS;
        };
    }

    // ---------------------------------------------------------------- plumbing

    private void write(BoltFrame frame) {
        traffic = true;
        ctx.write(frame.takeBytes(), ctx.voidPromise()); // the frame is its wire form
        if (!flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(flushTask); // one flush per loop iteration, however many responses
        }
    }

    private void flushNow() {
        flushScheduled = false;
        ctx.flush();
    }

    private void updateRead() {
        boolean want = !closed && blockedOn == null && inFlight < maxInFlight && ctx.channel().isWritable();
        if (ctx.channel().config().isAutoRead() != want) {
            ctx.channel().config().setAutoRead(want);
        }
    }

    /**
     * Draining and nothing in flight: stop reading, flush, and close after
     * {@link BoltListenerContext#DRAIN_LINGER}. Closing at once races the bolt {@code RpcClient},
     * which handles a FIN read together with the last response on its IO thread (failing the
     * call with ConnectionClosed) before its executor has delivered that response.
     */
    private void closeDrained() {
        closed = true;
        ctx.channel().config().setAutoRead(false);
        ctx.flush();
        scheduler.schedule(ctx::close, BoltListenerContext.DRAIN_LINGER.toNanos());
    }

    private void closeAfterFlush() {
        closed = true;
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        updateRead();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == DrainEvent.INSTANCE) {
            draining = true;
            if (inFlight == 0 && !closed) {
                closeDrained();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void onIdleTimer() {
        checkIdle();
        if (ctx.channel().isActive()) { // channelInactive cancels; a closed channel needs no more checks
            idleTimer.armIn(idleCheckNanos);
        }
    }

    /** Every quarter idle timeout: closes the connection after {@link #IDLE_CHECKS} quiet checks in a row. */
    private void checkIdle() {
        if (traffic || inFlight > 0) {
            traffic = false;
            quietChecks = 0;
        } else if (++quietChecks >= IDLE_CHECKS && !closed) {
            ctx.close(); // no traffic, not even heartbeats
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // resets end this connection only; channelInactive cleans up
    }
}
