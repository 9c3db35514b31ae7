package io.sluice.bench.http;

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
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A closed-loop HTTP/1.1 load generator in the manner of wrk: {@code c} keep-alive connections
 * spread over {@code t} event-loop threads, each sending its next request as soon as the previous
 * response is complete, for a fixed duration. With {@code --rate N} it is open-loop like wrk2: the
 * connections share N requests per second on a fixed schedule, and each latency is measured from
 * when the request was due, not when it could be sent (no coordinated omission: a stall shows up in
 * the percentiles of every request it delayed). Records every latency, counts non-2xx/3xx answers
 * and socket errors, and prints a wrk-style report. Used where wrk is not installed, and by the
 * benchmark scripts so every run is comparable.
 */
public final class HttpLoad {

    /** What to run. */
    public record Options(URI uri, int connections, int threads, Duration duration, Duration timeout,
                          Map<String, String> headers, int rate, Duration warmUp) {

        /** Closed-loop options (no fixed rate, no warm-up). */
        public Options(URI uri, int connections, int threads, Duration duration, Duration timeout,
                       Map<String, String> headers) {
            this(uri, connections, threads, duration, timeout, headers, 0, Duration.ZERO);
        }

        public Options {
            if (rate < 0) {
                throw new IllegalArgumentException("--rate must be positive");
            }
            if (uri.getPort() <= 0 && uri.getHost() == null) {
                throw new IllegalArgumentException("need a URL like http://127.0.0.1:2046/");
            }
            if (connections < 1 || threads < 1) {
                throw new IllegalArgumentException("connections and threads must be at least 1");
            }
            threads = Math.min(threads, connections);
        }

        int port() {
            return uri.getPort() > 0 ? uri.getPort() : 80;
        }

        String pathAndQuery() {
            String p = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            return uri.getRawQuery() == null ? p : p + "?" + uri.getRawQuery();
        }
    }

    /** What happened. */
    public record Result(long requests, long bytesRead, long non2xx3xx, long connectErrors, long readErrors,
                         long timeouts, double seconds, LatencyHistogram latency) {

        public double requestsPerSecond() {
            return seconds <= 0 ? 0 : requests / seconds;
        }

        public long errors() {
            return non2xx3xx + connectErrors + readErrors + timeouts;
        }
    }

    private HttpLoad() {
    }

    public static void main(String[] args) throws InterruptedException {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("http-load: " + e.getMessage());
            System.err.println("usage: http-load [-c connections] [-t threads] [-d 10s] [-R rate] [-w warm-up] [--timeout 2s] [-H 'Name: value']... URL");
            System.exit(2);
            return;
        }
        Result r = run(o);
        print(o, r, System.out);
        System.exit(r.requests() > 0 ? 0 : 1);
    }

    static Options parse(String[] args) {
        int c = 10;
        int t = 2;
        Duration d = Duration.ofSeconds(10);
        Duration timeout = Duration.ofSeconds(2);
        Map<String, String> headers = new LinkedHashMap<>();
        int rate = 0;
        Duration warmUp = Duration.ZERO;
        URI uri = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-c", "--connections" -> c = Integer.parseInt(LoadSupport.value(args, ++i, a));
                case "-t", "--threads" -> t = Integer.parseInt(LoadSupport.value(args, ++i, a));
                case "-d", "--duration" -> d = LoadSupport.duration(LoadSupport.value(args, ++i, a));
                case "--timeout" -> timeout = LoadSupport.duration(LoadSupport.value(args, ++i, a));
                case "-R", "--rate" -> rate = Integer.parseInt(LoadSupport.value(args, ++i, a));
                case "-w", "--warm-up" -> warmUp = LoadSupport.duration(LoadSupport.value(args, ++i, a));
                case "-H", "--header" -> {
                    String h = LoadSupport.value(args, ++i, a);
                    int colon = h.indexOf(':');
                    if (colon <= 0) {
                        throw new IllegalArgumentException("header must look like 'Name: value': " + h);
                    }
                    headers.put(h.substring(0, colon).trim(), h.substring(colon + 1).trim());
                }
                case "--latency" -> {
                    // wrk compatibility: the distribution is always printed
                }
                default -> {
                    if (a.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option " + a);
                    }
                    uri = URI.create(a);
                }
            }
        }
        if (uri == null || !"http".equals(uri.getScheme())) {
            throw new IllegalArgumentException("need an http:// URL");
        }
        return new Options(uri, c, t, d, timeout, headers, rate, warmUp);
    }



    /** Runs the load and returns the totals; blocks for about the configured duration. */
    public static Result run(Options o) throws InterruptedException {
        Transport transport = Transport.select(TransportConfig.defaults());
        EventLoopGroup group = transport.newGroup(o.threads(), "http-load");
        List<Conn> conns = new ArrayList<>();
        try {
            long start = System.nanoTime();
            long measureFrom = start + o.warmUp().toNanos(); // requests sent before are not recorded
            long end = measureFrom + o.duration().toNanos();
            CountDownLatch done = new CountDownLatch(o.connections());
            Bootstrap b = new Bootstrap().group(group).channel(transport.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) o.timeout().toMillis());
            long interval = o.rate() > 0 ? Math.max(1, (long) (1e9 * o.connections() / o.rate())) : 0;
            for (int i = 0; i < o.connections(); i++) {
                // at a fixed rate, connection i starts i/c of an interval late: sends are spread evenly
                Conn c = new Conn(o, b, measureFrom, end, done, interval, start + interval * i / o.connections());
                conns.add(c);
                c.connect();
            }
            // totals are read after the latch: by then the loops no longer write them
            done.await(o.warmUp().toMillis() + o.duration().toMillis() + o.timeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
            double seconds = (System.nanoTime() - measureFrom) / 1e9;
            LatencyHistogram all = new LatencyHistogram();
            long requests = 0;
            long bytes = 0;
            long bad = 0;
            long connectErr = 0;
            long readErr = 0;
            long timeouts = 0;
            for (Conn c : conns) {
                all.add(c.histogram);
                requests += c.requests;
                bytes += c.bytes;
                bad += c.non2xx;
                connectErr += c.connectErrors;
                readErr += c.readErrors;
                timeouts += c.timeouts;
            }
            return new Result(requests, bytes, bad, connectErr, readErr, timeouts, seconds, all);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** Prints the run the way wrk does, so reports from either tool read alike. */
    public static void print(Options o, Result r, PrintStream out) {
        LatencyHistogram h = r.latency();
        out.printf("Running %s test @ %s%n", human(o.duration()), o.uri());
        out.printf("  %d threads and %d connections%s%n", o.threads(), o.connections(),
                o.rate() > 0 ? ", " + o.rate() + " requests/s on a fixed schedule" : "");
        out.printf("  Thread Stats   Avg      Stdev     Max%n");
        out.printf("    Latency   %8s  %8s  %8s%n", LatencyHistogram.format(h.meanMicros()),
                LatencyHistogram.format(h.stdDevMicros()), LatencyHistogram.format(h.maxMicros()));
        out.printf("  Latency Distribution%n");
        double[] ps = o.rate() > 0 ? new double[] {50, 75, 90, 99, 99.9, 99.99, 100} : new double[] {50, 75, 90, 99};
        for (double p : ps) {
            String label = p == Math.rint(p) ? String.format("%5.0f%%", p) : String.format("%5s%%", p);
            out.printf("  %s  %8s%n", label, LatencyHistogram.format(h.percentileMicros(p)));
        }
        out.printf("  %d requests in %.2fs, %s read%n", r.requests(), r.seconds(), bytes(r.bytesRead()));
        if (r.connectErrors() + r.readErrors() + r.timeouts() > 0) {
            out.printf("  Socket errors: connect %d, read %d, write 0, timeout %d%n", r.connectErrors(), r.readErrors(),
                    r.timeouts());
        }
        if (r.non2xx3xx() > 0) {
            out.printf("  Non-2xx or 3xx responses: %d%n", r.non2xx3xx());
        }
        out.printf("Requests/sec: %10.2f%n", r.requestsPerSecond());
        out.printf("Transfer/sec: %10s%n", bytes((long) (r.bytesRead() / Math.max(r.seconds(), 1e-9))));
    }

    private static String human(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }

    static String bytes(long n) {
        if (n < 1024) {
            return n + "B";
        }
        if (n < 1024 * 1024) {
            return String.format("%.2fKB", n / 1024.0);
        }
        if (n < 1024L * 1024 * 1024) {
            return String.format("%.2fMB", n / (1024.0 * 1024));
        }
        return String.format("%.2fGB", n / (1024.0 * 1024 * 1024));
    }

    /** One keep-alive connection: send, wait for the whole response, record, repeat until the deadline. */
    private static final class Conn extends ChannelInboundHandlerAdapter {
        private final Options o;
        private final Bootstrap bootstrap;
        private final long measureFrom;
        private final long end;
        private final CountDownLatch done;
        final LatencyHistogram histogram = new LatencyHistogram();
        long requests;
        long bytes;
        long non2xx;
        long connectErrors;
        long readErrors;
        long timeouts;
        private Channel channel;
        private long sentAt;
        private boolean inFlight;
        private boolean finished;
        private ScheduledFuture<?> watchdog;
        private FullHttpRequest request;
        /** Fixed rate: nanos between this connection's requests (0 = closed loop), and when the next is due. */
        private final long interval;
        private long due;
        private boolean scheduled;

        Conn(Options o, Bootstrap bootstrap, long measureFrom, long end, CountDownLatch done, long interval,
             long firstDue) {
            this.o = o;
            this.measureFrom = measureFrom;
            this.bootstrap = bootstrap;
            this.end = end;
            this.done = done;
            this.interval = interval;
            this.due = firstDue;
        }

        void connect() {
            ChannelFuture f = bootstrap.clone().handler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(new LoadSupport.ByteCounter(n -> bytes += n), new HttpClientCodec(), Conn.this);
                }
            }).connect(o.uri().getHost(), o.port());
            f.addListener((ChannelFuture cf) -> {
                if (!cf.isSuccess()) {
                    connectErrors++;
                    if (System.nanoTime() < end) {
                        cf.channel().eventLoop().schedule(this::connect, 10, TimeUnit.MILLISECONDS);
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
            if (!scheduled) {
                send();
            }
        }

        private void send() {
            scheduled = false;
            if (!channel.isActive()) {
                return; // reconnecting: channelActive sends
            }
            long now = System.nanoTime();
            if (now >= end || (interval > 0 && due >= end)) {
                finish();
                return;
            }
            if (interval > 0 && due > now) {
                scheduled = true; // not due yet: wait for the schedule
                channel.eventLoop().schedule(this::send, due - now, TimeUnit.NANOSECONDS);
                return;
            }
            if (request == null) {
                // one request object per connection, re-sent each time (its content is the empty buffer)
                request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, o.pathAndQuery(),
                        Unpooled.EMPTY_BUFFER);
                request.headers().set(HttpHeaderNames.HOST, o.uri().getHost() + ":" + o.port());
                for (Map.Entry<String, String> e : o.headers().entrySet()) {
                    request.headers().set(e.getKey(), e.getValue());
                }
            }
            FullHttpRequest req = request;
            inFlight = true;
            if (interval > 0) {
                sentAt = due; // latency counts from when the request was due (no coordinated omission)
                due += interval;
            } else {
                sentAt = now;
            }
            channel.writeAndFlush(req, channel.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpResponse r) {
                    int code = r.status().code();
                    if (code < 200 || code >= 400) {
                        non2xx++;
                    }
                }
                if (msg instanceof LastHttpContent && inFlight) {
                    inFlight = false;
                    if (sentAt >= measureFrom) {
                        histogram.recordNanos(System.nanoTime() - sentAt);
                        requests++;
                    }
                    send();
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void checkTimeout() {
            if (inFlight && System.nanoTime() - sentAt > o.timeout().toNanos()) {
                timeouts++;
                inFlight = false;
                channel.close();
            } else if (!inFlight && !scheduled && System.nanoTime() >= end) {
                finish();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (inFlight) {
                readErrors++;
                inFlight = false;
            }
            if (!finished && System.nanoTime() < end) {
                connect(); // like wrk: a closed connection is replaced
            } else {
                finish();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
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
