package io.sluice.bench.bolt;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.bench.LatencyHistogram;
import io.sluice.bench.LoadSupport;
import io.sluice.codec.bolt.BoltDecodeError;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.transport.Transport;

import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Bolt load generator with sofaload's options and output, sending sofaload's own request
 * ({@link SofaloadRequest}): {@code -c} connections over {@code -t} threads, up to {@code -m}
 * requests in flight per connection, for {@code -D} seconds (after {@code --warm-up-time}), or at
 * a fixed {@code --qps}, or {@code -n} requests in all. Prints the same report sofaload prints,
 * so scripts and readers treat both alike; the benchmark scripts prefer the real sofaload when
 * it is on PATH.
 */
public final class BoltLoad {

    /** The run. {@code duration} null means count mode ({@code requests}). */
    public record Options(String host, int port, int connections, int threads, int maxInFlight, Duration duration,
                          Duration warmUp, int qps, long requests, Duration timeout) {

        public Options {
            if (connections < 1 || threads < 1 || maxInFlight < 1) {
                throw new IllegalArgumentException("-c, -t and -m must be at least 1");
            }
            if (qps > 0 && duration == null) {
                throw new IllegalArgumentException("--qps needs -D");
            }
            threads = Math.min(threads, connections);
        }
    }

    /** Totals of the measured phase. */
    public record Result(long total, long started, long done, long succeeded, long failed, long errored,
                         long timeouts, long[] statusCounts, long bytesRead, long bytesWritten, double elapsedSeconds,
                         double measuredSeconds, LatencyHistogram latency) {

        public double requestsPerSecond() {
            return measuredSeconds <= 0 ? 0 : succeeded / measuredSeconds;
        }
    }

    private BoltLoad() {
    }

    public static void main(String[] args) throws InterruptedException {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("bolt-load: " + e.getMessage());
            System.err.println("usage: bolt-load [-D secs | -n N] [--warm-up-time 1s] [--qps N] [-c N] [-t N] [-m N] "
                    + "[-p sofarpc] sofarpc://HOST:PORT");
            System.exit(2);
            return;
        }
        System.out.println("starting benchmark...");
        System.out.println("Application protocol: sofarpc");
        System.out.println();
        Result r = run(o);
        print(r, System.out);
    }

    static Options parse(String[] args) {
        int c = 1;
        int t = 1;
        int m = 1;
        Duration d = null;
        Duration warm = Duration.ZERO;
        int qps = 0;
        long n = 1;
        Duration timeout = Duration.ofSeconds(5);
        URI uri = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String inline = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                inline = a.substring(eq + 1);
                a = a.substring(0, eq);
            }
            switch (a) {
                case "-c", "--clients" -> c = Integer.parseInt(inline != null ? inline : LoadSupport.value(args, ++i, a));
                case "-t", "--threads" -> t = Integer.parseInt(inline != null ? inline : LoadSupport.value(args, ++i, a));
                case "-m", "--max-concurrent-streams" -> m = Integer.parseInt(inline != null ? inline : LoadSupport.value(args, ++i, a));
                case "-D", "--duration" -> d = Duration.ofSeconds(Long.parseLong(inline != null ? inline : LoadSupport.value(args, ++i, a)));
                case "-n", "--requests" -> n = Long.parseLong(inline != null ? inline : LoadSupport.value(args, ++i, a));
                case "--warm-up-time" -> warm = LoadSupport.duration(inline != null ? inline : LoadSupport.value(args, ++i, a));
                case "--qps" -> qps = Integer.parseInt(inline != null ? inline : LoadSupport.value(args, ++i, a));
                case "-N", "--timeout" -> timeout = LoadSupport.duration(inline != null ? inline : LoadSupport.value(args, ++i, a));
                case "-p", "--no-tls-proto" -> {
                    String p = inline != null ? inline : LoadSupport.value(args, ++i, a);
                    if (!p.equals("sofarpc")) {
                        throw new IllegalArgumentException("only -p sofarpc is supported");
                    }
                }
                default -> {
                    if (a.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option " + a);
                    }
                    uri = URI.create(a);
                }
            }
        }
        if (uri == null || uri.getHost() == null || uri.getPort() <= 0) {
            throw new IllegalArgumentException("need a target like sofarpc://127.0.0.1:12200 (with the port)");
        }
        return new Options(uri.getHost(), uri.getPort(), c, t, m, d, warm, qps, n, timeout);
    }



    /** Runs the load; blocks for the run's length. */
    public static Result run(Options o) throws InterruptedException {
        Transport transport = Transport.select(TransportConfig.defaults());
        EventLoopGroup group = transport.newGroup(o.threads(), "bolt-load");
        byte[] template = SofaloadRequest.frame();
        List<Client> clients = new ArrayList<>();
        try {
            long start = System.nanoTime();
            long measureFrom = start + o.warmUp().toNanos();
            long end = o.duration() == null ? Long.MAX_VALUE : measureFrom + o.duration().toNanos();
            CountDownLatch done = new CountDownLatch(o.connections());
            Shared shared = new Shared(o.duration() == null ? o.requests() : Long.MAX_VALUE);
            Bootstrap b = new Bootstrap().group(group).channel(transport.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, o.timeout().toMillis()));
            double perClientQps = o.qps() > 0 ? (double) o.qps() / o.connections() : 0;
            for (int i = 0; i < o.connections(); i++) {
                Client c = new Client(o, template, measureFrom, end, perClientQps, shared, done);
                clients.add(c);
                b.clone().handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new LoadSupport.ByteCounter(n -> c.bytesRead += n), new BoltFrameDecoder(), c);
                    }
                }).connect(o.host(), o.port()).addListener((ChannelFuture f) -> {
                    if (!f.isSuccess()) {
                        c.connectFailed();
                    }
                });
            }
            long waitMillis = o.duration() == null ? TimeUnit.DAYS.toMillis(1)
                    : o.warmUp().toMillis() + o.duration().toMillis() + o.timeout().toMillis() + 5_000;
            done.await(waitMillis, TimeUnit.MILLISECONDS);
            long finished = System.nanoTime();
            long[] statuses = new long[19];
            LatencyHistogram h = new LatencyHistogram();
            long started = 0;
            long completed = 0;
            long ok = 0;
            long failed = 0;
            long errored = 0;
            long timeouts = 0;
            long read = 0;
            long written = 0;
            for (Client c : clients) {
                h.add(c.histogram);
                for (int s = 0; s < statuses.length; s++) {
                    statuses[s] += c.statuses[s];
                }
                started += c.started;
                completed += c.completed;
                ok += c.succeeded;
                failed += c.failed;
                errored += c.errored;
                timeouts += c.timeouts;
                read += c.bytesRead;
                written += c.bytesWritten;
            }
            long total = o.duration() == null ? o.requests()
                    : o.qps() > 0 ? (long) o.qps() * o.duration().toSeconds() : shared.issued;
            if (PER_SECOND != null) {
                PerSecond.write(clients.stream().map(c -> c.perSecond).toList(), java.nio.file.Path.of(PER_SECOND));
            }
            double elapsed = (finished - start) / 1e9;
            double measured = o.duration() == null ? elapsed : o.duration().toNanos() / 1e9;
            return new Result(total, started, completed, ok, failed, errored, timeouts, statuses, read, written,
                    elapsed, measured, h);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** Prints the report in sofaload's layout. */
    public static void print(Result r, PrintStream out) {
        double mb = 1024.0 * 1024;
        out.printf("finished in %s, %.2f req/s, %.2fMB/s%n", dur(r.elapsedSeconds() * 1e6), r.requestsPerSecond(),
                r.bytesRead() / mb / Math.max(r.measuredSeconds(), 1e-9));
        out.printf("requests: %d total, %d started, %d done, %d succeeded, %d failed, %d errored, %d timeout%n",
                r.total(), r.started(), r.done(), r.succeeded(), r.failed(), r.errored(), r.timeouts());
        long[] s = r.statusCounts();
        out.print("sofaRPC status codes: \n");
        out.printf("\t%d success, %d error, %d server exception, %d unknown%n", s[0], s[1], s[2], s[3]);
        out.printf("\t%d server threadpool busy, %d error comm, %d no processor, %d timeout%n", s[4], s[5], s[6], s[7]);
        out.printf("\t%d client send error, %d codec exception, %d connection closed, %d server serial exception%n",
                s[8], s[9], s[16], s[17]);
        out.printf("\t%d server deserial exception%n", s[18]);
        out.printf("traffic: %.2fMB (%d) total, %.2fMB (%d) headers (space savings 0.00%%), %.2fMB (%d) data%n",
                r.bytesRead() / mb, r.bytesRead(), 0.0, 0, r.bytesRead() / mb, r.bytesRead());
        LatencyHistogram h = r.latency();
        out.printf("                     min         max         mean         sd        +/- sd%n");
        out.printf("time for request: %10s  %10s  %10s  %10s  %8.2f%%%n", dur(h.minMicros()), dur(h.maxMicros()),
                dur(h.meanMicros()), dur(h.stdDevMicros()), withinOneSd(h));
        out.println();
        out.println("  Latency  Distribution");
        for (int p : new int[] {50, 75, 90, 95, 99}) {
            out.printf("   %d%%  %10s%n", p, dur(h.percentileMicros(p)));
        }
    }

    private static double withinOneSd(LatencyHistogram h) {
        return h.count() == 0 ? 0 : 100.0 * h.fractionWithin(h.meanMicros() - h.stdDevMicros(), h.meanMicros() + h.stdDevMicros());
    }

    /** sofaload's duration format: whole µs below 1 ms, X.YYms below 1 s, X.YYs above. */
    static String dur(double micros) {
        if (micros < 1_000) {
            return String.format("%dus", Math.round(micros));
        }
        if (micros < 1_000_000) {
            return String.format("%.2fms", micros / 1_000);
        }
        return String.format("%.2fs", micros / 1_000_000);
    }

    /** Count-mode budget shared by all clients (touched once per request issued). */
    private static final class Shared {
        private final AtomicLong budget;
        volatile long issued;

        Shared(long requests) {
            this.budget = new AtomicLong(requests);
        }

        boolean take() {
            if (budget.get() == Long.MAX_VALUE || budget.getAndDecrement() > 0) {
                return true;
            }
            return false;
        }
    }

    /**
     * One connection: keeps up to {@code m} requests in flight (or paces them at its share of
     * {@code --qps}), matches responses by id through a ring of send times, and counts.
     */
    /** Where to write p50/p99/max per second of the measured phase (cold-start.sh), or null. */
    static final String PER_SECOND = System.getProperty("bolt-load.per-second");

    /** Latencies by second, for {@code -Dbolt-load.per-second=FILE}: one writer (the client's event loop). */
    static final class PerSecond {
        private int[] seconds = new int[1024];
        private long[] micros = new long[1024];
        private int n;

        void add(int second, long us) {
            if (second < 0) {
                return;
            }
            if (n == seconds.length) {
                seconds = java.util.Arrays.copyOf(seconds, n * 2);
                micros = java.util.Arrays.copyOf(micros, n * 2);
            }
            seconds[n] = second;
            micros[n++] = us;
        }

        /** TSV: second, count, p50_us, p99_us, max_us. */
        static void write(List<PerSecond> all, java.nio.file.Path file) {
            java.util.TreeMap<Integer, List<Long>> by = new java.util.TreeMap<>();
            for (PerSecond p : all) {
                for (int i = 0; i < p.n; i++) {
                    by.computeIfAbsent(p.seconds[i], k -> new ArrayList<>()).add(p.micros[i]);
                }
            }
            StringBuilder sb = new StringBuilder("second\tcount\tp50_us\tp99_us\tmax_us\n");
            by.forEach((sec, v) -> {
                long[] a = v.stream().mapToLong(Long::longValue).sorted().toArray();
                sb.append(sec).append('\t').append(a.length).append('\t').append(a[(int) Math.min(a.length - 1, Math.floor(a.length * 0.50))])
                        .append('\t').append(a[(int) Math.min(a.length - 1, Math.floor(a.length * 0.99))]).append('\t').append(a[a.length - 1]).append('\n');
            });
            try {
                java.nio.file.Files.writeString(file, sb);
            } catch (java.io.IOException e) {
                System.err.println("bolt-load: cannot write " + file + ": " + e);
            }
        }
    }

    private static final class Client extends ChannelInboundHandlerAdapter {
        /** Ring of send times by request id: a power of two well above the requests in flight (small, so 10 000 connections fit). */
        private final int window;

        private final Options o;
        private final byte[] template;
        private final long measureFrom;
        private final long end;
        private final double qpsShare;
        private final Shared shared;
        private final CountDownLatch done;
        private final long[] sentAt;
        private final int[] idAt;
        final LatencyHistogram histogram = new LatencyHistogram();
        /** With {@code -Dbolt-load.per-second=FILE}: (second since the measured phase began, micros) pairs. */
        final PerSecond perSecond = PER_SECOND == null ? null : new PerSecond();
        final long[] statuses = new long[19];
        long started;
        long completed;
        long succeeded;
        long failed;
        long errored;
        long timeouts;
        long bytesRead;
        long bytesWritten;
        private Channel channel;
        private int nextId = 1;
        private int inFlight;
        private boolean finished;
        private double credit;
        private long lastTick;
        private ScheduledFuture<?> ticker;

        Client(Options o, byte[] template, long measureFrom, long end, double qpsShare, Shared shared,
               CountDownLatch done) {
            this.window = Integer.highestOneBit(Math.max(64, o.maxInFlight() * 64) - 1) << 1;
            this.sentAt = new long[window];
            this.idAt = new int[window];
            this.o = o;
            this.template = template;
            this.measureFrom = measureFrom;
            this.end = end;
            this.qpsShare = qpsShare;
            this.shared = shared;
            this.done = done;
        }

        void connectFailed() {
            errored++;
            failed++;
            finish();
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            long tickMillis = 5;
            lastTick = System.nanoTime();
            ticker = ctx.executor().scheduleAtFixedRate(this::tick, tickMillis, tickMillis, TimeUnit.MILLISECONDS);
            if (qpsShare == 0) {
                fill();
            }
        }

        private void tick() {
            long now = System.nanoTime();
            if (now >= end && inFlight == 0 || end != Long.MAX_VALUE && now - end >= o.timeout().toNanos()) {
                timeouts += inFlight;
                failed += inFlight;
                inFlight = 0;
                finish();
                return;
            }
            if (qpsShare > 0 && now < end) {
                credit = Math.min(credit + qpsShare * (now - lastTick) / 1e9, Math.max(1, qpsShare));
                lastTick = now;
                while (credit >= 1 && inFlight < o.maxInFlight()) {
                    credit -= 1;
                    send(now);
                }
                channel.flush();
            }
        }

        private void fill() {
            long now = System.nanoTime();
            boolean sent = false;
            while (inFlight < o.maxInFlight() && now < end && shared.take()) {
                send(now);
                sent = true;
            }
            if (sent) {
                channel.flush();
            } else if (inFlight == 0) {
                finish(); // count mode exhausted, or time is up
            }
        }

        private void send(long now) {
            int id = nextId++;
            ByteBuf buf = channel.alloc().directBuffer(template.length).writeBytes(template);
            buf.setInt(SofaloadRequest.ID_OFFSET, id);
            int slot = id & (window - 1);
            sentAt[slot] = now;
            idAt[slot] = id;
            inFlight++;
            bytesWritten += template.length;
            if (now >= measureFrom) {
                started++;
            }
            shared.issued++;
            channel.write(buf, channel.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof BoltFrame f && f.isResponse()) {
                    int slot = f.requestId() & (window - 1);
                    if (idAt[slot] != f.requestId() || sentAt[slot] == 0) {
                        return; // unknown id: skipped, like sofaload
                    }
                    long t0 = sentAt[slot];
                    sentAt[slot] = 0;
                    inFlight--;
                    if (t0 >= measureFrom) {
                        long now = System.nanoTime();
                        completed++;
                        int st = f.status();
                        if (st >= 0 && st < statuses.length) {
                            statuses[st]++;
                        }
                        if (st == 0) {
                            succeeded++;
                            histogram.recordNanos(now - t0);
                            if (perSecond != null) {
                                perSecond.add((int) ((now - measureFrom) / 1_000_000_000L), (now - t0) / 1_000);
                            }
                        } else {
                            failed++;
                        }
                    }
                } else if (msg instanceof BoltDecodeError) {
                    errored++;
                    ctx.close();
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
            if (qpsShare == 0 && !finished) {
                fill();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (!finished) {
                failed += inFlight; // like sofaload: a closed client is dead for the rest of the run
                errored += inFlight > 0 ? 1 : 0;
                inFlight = 0;
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
            if (ticker != null) {
                ticker.cancel(false);
            }
            if (channel != null) {
                channel.close();
            }
            done.countDown();
        }
    }

}
