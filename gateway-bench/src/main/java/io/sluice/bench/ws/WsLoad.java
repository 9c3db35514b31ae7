package io.sluice.bench.ws;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.bench.LatencyHistogram;
import io.sluice.bench.LoadSupport;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.transport.Transport;

import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A WebSocket load generator: {@code c} connections over {@code t} event-loop threads, each doing the
 * RFC 6455 opening handshake (Netty's WebSocket client codec, so a proxy sees a real
 * {@code Upgrade: websocket} request) and then keeping {@code m} messages of {@code size} bytes in
 * flight (m = 1: a closed loop, the next message when the previous echo is back) against an echo
 * server ({@link WsEcho}), for a fixed duration after an optional warm-up. The echo of a message
 * ends it: its latency is from when it was written to when its echo was read (echoes come back in
 * order on one connection, so a ring of send times per connection matches them). An echo of another
 * length, a handshake that fails, a connection that closes and a message unanswered for
 * {@code --timeout} are errors (the connection is then replaced, as wrk does). Prints a wrk-style
 * report ending in {@code Messages/sec:}, which the scenario script ({@code ws-peers.sh}) parses.
 */
public final class WsLoad {

    /** What to run. */
    public record Options(URI uri, int connections, int threads, int inFlight, int size, boolean text,
                          Duration duration, Duration warmUp, Duration timeout) {

        public Options {
            if (uri.getHost() == null || !"ws".equals(uri.getScheme())) {
                throw new IllegalArgumentException("need a URL like ws://127.0.0.1:2046/ws");
            }
            if (connections < 1 || threads < 1 || inFlight < 1) {
                throw new IllegalArgumentException("connections, threads and messages in flight must be at least 1");
            }
            if (size < 1 || size > 1 << 20) {
                throw new IllegalArgumentException("message size must be 1 B .. 1 MiB");
            }
            threads = Math.min(threads, connections);
        }

        int port() {
            return uri.getPort() > 0 ? uri.getPort() : 80;
        }
    }

    /**
     * What happened. {@code messages}: echoes of messages sent and answered within the measured window
     * (the rate and latencies are theirs); {@code echoed}: every echo of the run, warm-up included (what a
     * proxy's CPU time over the whole client run is divided by).
     */
    public record Result(long messages, long echoed, long bytesRead, long handshakeErrors, long connectErrors, long closed,
                         long badEchoes, long timeouts, double seconds, LatencyHistogram latency) {

        public double messagesPerSecond() {
            return seconds <= 0 ? 0 : messages / seconds;
        }

        public long errors() {
            return handshakeErrors + connectErrors + closed + badEchoes + timeouts;
        }
    }

    private static final String USAGE = "usage: ws-load [-c connections] [-t threads] [-m in-flight per connection] "
            + "[-s bytes] [--text] [-d 10s] [-w warm-up] [--timeout 2s] ws://HOST:PORT/PATH";

    private WsLoad() {
    }

    public static void main(String[] args) throws InterruptedException {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ws-load: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        Result r = run(o);
        print(o, r, System.out);
        System.exit(r.messages() > 0 ? 0 : 1);
    }

    static Options parse(String[] args) {
        int c = 10;
        int t = 1;
        int m = 1;
        int size = 1024;
        boolean text = false;
        Duration d = Duration.ofSeconds(10);
        Duration warmUp = Duration.ZERO;
        Duration timeout = Duration.ofSeconds(2);
        URI uri = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-c", "--connections" -> c = Integer.parseInt(LoadSupport.value(args, ++i, a));
                case "-t", "--threads" -> t = Integer.parseInt(LoadSupport.value(args, ++i, a));
                case "-m", "--in-flight" -> m = Integer.parseInt(LoadSupport.value(args, ++i, a));
                case "-s", "--size" -> size = Integer.parseInt(LoadSupport.value(args, ++i, a));
                case "--text" -> text = true;
                case "--binary" -> text = false;
                case "-d", "--duration" -> d = LoadSupport.duration(LoadSupport.value(args, ++i, a));
                case "-w", "--warm-up" -> warmUp = LoadSupport.duration(LoadSupport.value(args, ++i, a));
                case "--timeout" -> timeout = LoadSupport.duration(LoadSupport.value(args, ++i, a));
                default -> {
                    if (a.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option " + a);
                    }
                    uri = URI.create(a);
                }
            }
        }
        if (uri == null) {
            throw new IllegalArgumentException("need a ws:// URL");
        }
        return new Options(uri, c, t, m, size, text, d, warmUp, timeout);
    }

    /** Runs the load and returns the totals; blocks for about warm-up + duration. */
    public static Result run(Options o) throws InterruptedException {
        Transport transport = Transport.select(TransportConfig.defaults());
        EventLoopGroup group = transport.newGroup(o.threads(), "ws-load");
        // one payload for every message, never written to (frames are sent as read-only duplicates;
        // the client encoder masks into a new buffer)
        byte[] bytes = new byte[o.size()];
        Arrays.fill(bytes, (byte) 'w');
        ByteBuf payload = Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(bytes).asReadOnly());
        List<Conn> conns = new ArrayList<>();
        try {
            long start = System.nanoTime();
            long measureFrom = start + o.warmUp().toNanos();
            long end = measureFrom + o.duration().toNanos();
            CountDownLatch done = new CountDownLatch(o.connections());
            Bootstrap b = new Bootstrap().group(group).channel(transport.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) o.timeout().toMillis());
            for (int i = 0; i < o.connections(); i++) {
                Conn c = new Conn(o, b.clone(group.next()), payload, measureFrom, end, done);
                conns.add(c);
                c.connect();
            }
            done.await(o.warmUp().toMillis() + o.duration().toMillis() + 2 * o.timeout().toMillis() + 5_000,
                    TimeUnit.MILLISECONDS);
            double seconds = (Math.min(System.nanoTime(), end) - measureFrom) / 1e9;
            LatencyHistogram all = new LatencyHistogram();
            long messages = 0;
            long echoed = 0;
            long read = 0;
            long hs = 0;
            long ce = 0;
            long closed = 0;
            long bad = 0;
            long to = 0;
            for (Conn c : conns) {
                // read on the connection's own loop, the only thread that writes them
                Result v = c.loop.submit(c::totals).get(5, TimeUnit.SECONDS);
                messages += v.messages();
                echoed += v.echoed();
                read += v.bytesRead();
                hs += v.handshakeErrors();
                ce += v.connectErrors();
                closed += v.closed();
                bad += v.badEchoes();
                to += v.timeouts();
                all.add(v.latency());
            }
            return new Result(messages, echoed, read, hs, ce, closed, bad, to, seconds, all);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not collect the totals", e);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** Prints the run in wrk's manner, with messages in place of requests. */
    public static void print(Options o, Result r, PrintStream out) {
        LatencyHistogram h = r.latency();
        out.printf("Running %s test @ %s%n", human(o.duration()), o.uri());
        out.printf("  %d threads and %d connections, %d message%s in flight each, %d-byte %s messages%n", o.threads(),
                o.connections(), o.inFlight(), o.inFlight() == 1 ? "" : "s", o.size(), o.text() ? "text" : "binary");
        out.printf("  Thread Stats   Avg      Stdev     Max%n");
        out.printf("    Latency   %8s  %8s  %8s%n", LatencyHistogram.format(h.meanMicros()),
                LatencyHistogram.format(h.stdDevMicros()), LatencyHistogram.format(h.maxMicros()));
        out.printf("  Latency Distribution%n");
        for (double p : new double[] {50, 75, 90, 99, 99.9, 100}) {
            String label = p == Math.rint(p) ? String.format("%5.0f%%", p) : String.format("%5s%%", p);
            out.printf("  %s  %8s%n", label, LatencyHistogram.format(h.percentileMicros(p)));
        }
        out.printf("  %d messages in %.2fs, %s read%n", r.messages(), r.seconds(), human(r.bytesRead()));
        out.printf("  %d messages echoed in all, warm-up included%n", r.echoed());
        if (r.errors() > 0) {
            out.printf("  Errors: handshake %d, connect %d, closed %d, bad echo %d, timeout %d%n", r.handshakeErrors(),
                    r.connectErrors(), r.closed(), r.badEchoes(), r.timeouts());
        }
        out.printf("Messages/sec: %10.2f%n", r.messagesPerSecond());
    }

    private static String human(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }

    private static String human(long n) {
        if (n < 1024 * 1024) {
            return String.format("%.2fKB", n / 1024.0);
        }
        return String.format("%.2fMB", n / (1024.0 * 1024));
    }

    /** One WebSocket connection: handshake, then keep {@code m} messages in flight until the deadline. */
    private static final class Conn extends ChannelInboundHandlerAdapter {
        private final Options o;
        private final Bootstrap bootstrap;
        private final ByteBuf payload;
        private final long measureFrom;
        private final long end;
        private final CountDownLatch done;
        final LatencyHistogram histogram = new LatencyHistogram();
        long messages;
        long echoed;
        long bytes;
        long handshakeErrors;
        long connectErrors;
        long closed;
        long badEchoes;
        long timeouts;
        /** Send times of the messages in flight, oldest at head (a ring of m slots). */
        private final long[] sentAt;
        private int head;
        private int inFlight;
        private Channel channel;
        private boolean open;
        private boolean finished;
        private ScheduledFuture<?> watchdog;
        /** Closed by the watchdog: counted as a timeout, not again as a close. */
        private boolean closing;
        /** This connection's event loop: every reconnect stays on it, so one thread owns the counters. */
        final EventLoop loop;

        Conn(Options o, Bootstrap bootstrap, ByteBuf payload, long measureFrom, long end, CountDownLatch done) {
            this.o = o;
            this.bootstrap = bootstrap;
            this.loop = (EventLoop) bootstrap.config().group();
            this.payload = payload;
            this.measureFrom = measureFrom;
            this.end = end;
            this.done = done;
            this.sentAt = new long[o.inFlight()];
        }

        Result totals() {
            LatencyHistogram copy = new LatencyHistogram();
            copy.add(histogram);
            return new Result(messages, echoed, bytes, handshakeErrors, connectErrors, closed, badEchoes, timeouts, 0, copy);
        }

        void connect() {
            WebSocketClientProtocolConfig cfg = WebSocketClientProtocolConfig.newBuilder()
                    .webSocketUri(o.uri())
                    .version(WebSocketVersion.V13)
                    .customHeaders(new DefaultHttpHeaders())
                    .maxFramePayloadLength(Math.max(65536, o.size()))
                    .handshakeTimeoutMillis(o.timeout().toMillis())
                    .handleCloseFrames(true)
                    .dropPongFrames(true)
                    .withUTF8Validator(false) // the client's CPU shares the backend's core
                    .build();
            ChannelFuture f = bootstrap.clone().handler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(new LoadSupport.ByteCounter(n -> bytes += n), new HttpClientCodec(),
                            new HttpObjectAggregator(8192), new WebSocketClientProtocolHandler(cfg), Conn.this);
                }
            }).connect(o.uri().getHost(), o.port());
            f.addListener((ChannelFuture cf) -> {
                if (!cf.isSuccess()) {
                    connectErrors++;
                    if (System.nanoTime() < end) {
                        loop.schedule(this::connect, 10, TimeUnit.MILLISECONDS);
                    } else {
                        finish();
                    }
                }
            });
        }

        @Override
        public boolean isSharable() {
            return true; // one instance per logical connection, re-added on reconnect
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            if (watchdog == null) {
                long period = Math.max(10, o.timeout().toMillis() / 4);
                watchdog = ctx.executor().scheduleAtFixedRate(this::checkTimeout, period, period, TimeUnit.MILLISECONDS);
            }
            ctx.fireChannelActive();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                open = true;
                while (inFlight < sentAt.length && System.nanoTime() < end) {
                    send(ctx);
                }
                ctx.flush();
            }
            ctx.fireUserEventTriggered(evt);
        }

        private void send(ChannelHandlerContext ctx) {
            ByteBuf data = payload.duplicate();
            WebSocketFrame frame = o.text() ? new TextWebSocketFrame(data) : new BinaryWebSocketFrame(data);
            sentAt[(head + inFlight) % sentAt.length] = System.nanoTime();
            inFlight++;
            ctx.write(frame, ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (!(msg instanceof BinaryWebSocketFrame || msg instanceof TextWebSocketFrame)) {
                    return; // pings are answered by the protocol handler, pongs dropped
                }
                if (inFlight == 0) {
                    badEchoes++; // an echo nobody sent
                    return;
                }
                long now = System.nanoTime();
                long sent = sentAt[head];
                head = (head + 1) % sentAt.length;
                inFlight--;
                if (((WebSocketFrame) msg).content().readableBytes() != o.size() || !((WebSocketFrame) msg).isFinalFragment()) {
                    badEchoes++;
                } else {
                    echoed++;
                    if (sent >= measureFrom && now <= end) {
                        histogram.recordNanos(now - sent);
                        messages++;
                    }
                }
                if (now < end) {
                    send(ctx);
                } else if (inFlight == 0) {
                    finish();
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
            ctx.fireChannelReadComplete();
        }

        private void checkTimeout() {
            long now = System.nanoTime();
            if (inFlight > 0 && now - sentAt[head] > o.timeout().toNanos()) {
                timeouts++;
                inFlight = 0;
                closing = true;
                channel.close();
            } else if (now >= end && (inFlight == 0 || now - end > o.timeout().toNanos())) {
                finish();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (!finished && !closing) {
                if (!open) {
                    handshakeErrors++; // refused upgrade, handshake timeout, or closed before the 101
                } else {
                    closed++;
                }
            }
            closing = false;
            open = false;
            inFlight = 0;
            head = 0;
            if (!finished && System.nanoTime() < end) {
                loop.schedule(this::connect, 10, TimeUnit.MILLISECONDS);
            } else {
                finish();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a refused upgrade (e.g. 404 instead of 101) surfaces here; channelInactive counts it
        }

        private void finish() {
            if (finished) {
                return;
            }
            finished = true;
            if (watchdog != null) {
                watchdog.cancel(false);
            }
            if (channel != null) {
                channel.close();
            }
            done.countDown();
        }
    }
}
