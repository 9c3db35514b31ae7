package io.sluice.server.policy.ratelimit;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.handler.codec.redis.RedisArrayAggregator;
import io.netty.handler.codec.redis.RedisBulkStringAggregator;
import io.netty.handler.codec.redis.RedisDecoder;
import io.netty.handler.codec.redis.RedisEncoder;
import io.netty.handler.codec.redis.RedisMessage;
import io.netty.handler.codec.redis.SimpleStringRedisMessage;
import io.sluice.core.config.RateLimitConfig.RedisConfig;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One pipelined connection to Redis on one of the gateway's event loops (Netty's RESP codec; no
 * other client library). Leases run the {@link #SCRIPT} atomically with {@code EVALSHA} (falling
 * back to {@code EVAL} once after {@code NOSCRIPT}). Requests are queued FIFO; one not answered
 * within {@code timeout} closes the connection. Down → every lease fails at once (callers apply
 * their failure mode), ONE log line per state change, reconnects with back-off on the scheduler.
 * All state lives on {@link #loop}; {@link #up()} is a volatile read.
 */
final class RedisLink implements LeaseClient, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLink.class);

    /**
     * A token bucket in one Redis hash {@code {t: tokens, ts: start of the current fill period (ms)}}
     * on Redis's clock; leases {@code min(want, tokens)}. Returns {@code {granted, ms until the next
     * fill}}. Same discrete-fill semantics as the local bucket; the key expires once it would be full.
     */
    static final String SCRIPT = String.join("\n",
            "local max = tonumber(ARGV[1])",
            "local per = tonumber(ARGV[2])",
            "local fill = tonumber(ARGV[3])",
            "local want = tonumber(ARGV[4])",
            "local t = redis.call('TIME')",
            "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)",
            "local s = redis.call('HMGET', KEYS[1], 't', 'ts')",
            "local tokens = tonumber(s[1])",
            "local ts = tonumber(s[2])",
            "if tokens == nil or ts == nil then tokens = max; ts = now end",
            "if now > ts then",
            "  local periods = math.floor((now - ts) / fill)",
            "  if periods > 0 then",
            "    tokens = math.min(max, tokens + periods * per)",
            "    ts = ts + periods * fill",
            "  end",
            "end",
            "local granted = math.min(want, tokens)",
            "tokens = tokens - granted",
            "redis.call('HSET', KEYS[1], 't', tokens, 'ts', ts)",
            "redis.call('PEXPIRE', KEYS[1], fill * (math.ceil(max / per) + 1))",
            "return {granted, fill - (now - ts)}");

    static final String SHA = sha1(SCRIPT);
    private static final long HANDSHAKE_NANOS = 1_000_000_000L;

    private final RedisConfig config;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final Scheduler scheduler;
    private final Ticker ticker;
    private final long timeoutNanos;
    private final Reconnector reconnector;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong leases = new AtomicLong();
    private volatile boolean up;
    /** Null before the first outcome: the first state is logged either way. */
    private Boolean logged;
    private Channel channel;
    private Cancellable timeoutCheck = Cancellable.NOOP;
    private volatile boolean closed;

    /**
     * @param bootstrap a client bootstrap template on {@code loop} (group and channel class set)
     * @param scheduler runs on {@code loop}
     */
    RedisLink(RedisConfig config, EventLoop loop, Bootstrap bootstrap, Scheduler scheduler) {
        this.config = config;
        this.loop = loop;
        this.scheduler = scheduler;
        this.ticker = scheduler.ticker();
        this.timeoutNanos = config.timeout().toNanos();
        this.bootstrap = bootstrap.clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, Math.min(Integer.MAX_VALUE,
                        Math.max(config.timeout().toMillis() * 4, 200))))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new RedisDecoder(), new RedisBulkStringAggregator(), new RedisArrayAggregator(),
                                new RedisEncoder(), new ReplyHandler());
                    }
                });
        this.reconnector = new Reconnector(scheduler, config.reconnectMin().toNanos(), config.reconnectMax().toNanos(),
                this::connect);
    }

    /** Starts connecting (off the caller's thread). */
    void start() {
        loop.execute(this::connect);
    }

    @Override
    public boolean up() {
        return up;
    }

    /** Leases failed for want of an answer (timeouts, errors, connection lost). */
    long failures() {
        return failures.get();
    }

    /** Lease round trips answered. */
    long leases() {
        return leases.get();
    }

    String address() {
        return config.host() + ":" + config.port();
    }

    private void connect() {
        if (closed) {
            return;
        }
        ChannelFuture f = bootstrap.connect(config.host(), config.port());
        f.addListener((ChannelFuture cf) -> {
            if (!cf.isSuccess()) {
                down("connect failed: " + cf.cause().getMessage());
                reconnector.failed();
                return;
            }
            Channel ch = cf.channel();
            if (closed) {
                ch.close();
                return;
            }
            channel = ch;
            ch.closeFuture().addListener(x -> lost(ch, "connection closed"));
            timeoutCheck = scheduler.scheduleWithFixedDelay(this::checkTimeouts, timeoutNanos, Math.max(1_000_000, timeoutNanos / 2));
            // SCRIPT LOAD doubles as the health check: up only once Redis answered it
            send(List.of("SCRIPT", "LOAD", SCRIPT), new Pending(null, ticker.nanoTime(), null) {
                @Override
                void reply(RedisMessage m) {
                    if (m instanceof FullBulkStringRedisMessage b && SHA.equals(b.content().toString(StandardCharsets.US_ASCII))) {
                        reconnector.succeeded();
                        markUp();
                    } else {
                        fail(ch, "unexpected SCRIPT LOAD reply " + describe(m));
                    }
                }
            });
        });
    }

    @Override
    public void lease(String key, long maxTokens, long tokensPerFill, long fillMillis, int want, Callback callback) {
        if (!up) {
            callback.failed();
            return;
        }
        List<String> args = List.of(SHA, "1", key, Long.toString(maxTokens), Long.toString(tokensPerFill),
                Long.toString(fillMillis), Integer.toString(want));
        if (loop.inEventLoop()) {
            sendLease(args, callback);
        } else {
            loop.execute(() -> sendLease(args, callback));
        }
    }

    private void sendLease(List<String> args, Callback callback) {
        Channel ch = channel;
        if (!up || ch == null || !ch.isActive()) {
            callback.failed();
            return;
        }
        List<String> cmd = new ArrayList<>(args.size() + 1);
        cmd.add("EVALSHA");
        cmd.addAll(args);
        send(cmd, new Pending(callback, ticker.nanoTime(), args));
    }

    private void send(List<String> cmd, Pending p) {
        Channel ch = channel;
        List<RedisMessage> parts = new ArrayList<>(cmd.size());
        for (String s : cmd) {
            parts.add(new FullBulkStringRedisMessage(ByteBufUtil.writeUtf8(ch.alloc(), s)));
        }
        pending.add(p);
        ch.writeAndFlush(new ArrayRedisMessage(parts)).addListener(f -> {
            if (!f.isSuccess()) {
                fail(ch, "write failed: " + f.cause().getMessage());
            }
        });
    }

    private void checkTimeouts() {
        Pending head = pending.peek();
        if (head == null) {
            return;
        }
        // the handshake (SCRIPT LOAD, first command of a fresh connection) gets at least a second:
        // a cold JVM or a busy box must not flap the link at start
        long limit = head.callback == null ? Math.max(timeoutNanos, HANDSHAKE_NANOS) : timeoutNanos;
        if (ticker.nanoTime() - head.sentNanos >= limit) {
            fail(channel, "no answer within " + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(limit) + " ms");
        }
    }

    /** Gives up on {@code ch}: closes it (its close listener fails what is pending and reconnects). */
    private void fail(Channel ch, String why) {
        down(why);
        if (ch != null) {
            ch.close();
        }
    }

    private void lost(Channel ch, String why) {
        if (channel != ch) {
            return;
        }
        if (closed) {
            channel = null;
            timeoutCheck.cancel();
            Pending p;
            while ((p = pending.poll()) != null) {
                p.failed();
            }
            return; // closed on purpose: no "down" line
        }
        channel = null;
        timeoutCheck.cancel();
        down(why);
        Pending p;
        while ((p = pending.poll()) != null) {
            p.failed();
        }
        reconnector.failed();
    }

    private void markUp() {
        up = true;
        if (!Boolean.TRUE.equals(logged)) {
            logged = Boolean.TRUE;
            log.info("rate limit Redis {} is up: global rules are enforced", address());
        }
    }

    private void down(String why) {
        up = false;
        if (!Boolean.FALSE.equals(logged)) {
            logged = Boolean.FALSE;
            log.warn("rate limit Redis {} is down ({}): global rules {} until it is back (reconnecting with back-off)",
                    address(), why, config.failureModeDeny() ? "reject requests (failure_mode_deny)" : "fail open");
        }
    }

    @Override
    public void close() {
        closed = true;
        up = false;
        loop.execute(() -> {
            reconnector.close();
            timeoutCheck.cancel();
            Channel ch = channel;
            if (ch != null) {
                ch.close();
            }
        });
    }

    private static String describe(RedisMessage m) {
        if (m instanceof ErrorRedisMessage e) {
            return "error " + e.content();
        }
        if (m instanceof SimpleStringRedisMessage s) {
            return s.content();
        }
        return m.getClass().getSimpleName();
    }

    private static String sha1(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A command waiting for its reply. */
    private class Pending {
        final Callback callback;
        final long sentNanos;
        /** The EVALSHA arguments after the command name (to resend as EVAL after NOSCRIPT). */
        final List<String> args;

        Pending(Callback callback, long sentNanos, List<String> args) {
            this.callback = callback;
            this.sentNanos = sentNanos;
            this.args = args;
        }

        void reply(RedisMessage m) {
            if (m instanceof ArrayRedisMessage a && a.children().size() == 2
                    && a.children().get(0) instanceof IntegerRedisMessage g
                    && a.children().get(1) instanceof IntegerRedisMessage w) {
                leases.incrementAndGet();
                callback.granted(g.value(), w.value());
            } else if (m instanceof ErrorRedisMessage e && e.content().startsWith("NOSCRIPT") && args != null) {
                List<String> cmd = new ArrayList<>(args.size() + 1);
                cmd.add("EVAL");
                cmd.add(SCRIPT);
                cmd.addAll(args.subList(1, args.size()));
                send(cmd, new Pending(callback, ticker.nanoTime(), null));
            } else {
                failed();
                fail(channel, "unexpected reply " + describe(m));
            }
        }

        void failed() {
            if (callback != null) {
                failures.incrementAndGet();
                callback.failed();
            }
        }
    }

    private final class ReplyHandler extends SimpleChannelInboundHandler<RedisMessage> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, RedisMessage msg) {
            Pending p = pending.poll();
            if (p != null) {
                p.reply(msg);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(ctx.channel(), cause.toString());
        }
    }
}
