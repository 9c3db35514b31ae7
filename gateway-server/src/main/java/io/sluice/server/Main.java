package io.sluice.server;

import io.netty.channel.EventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.WatchConfig;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.config.ConfigWatcher;
import io.sluice.server.config.LoadedConfig;
import io.sluice.server.demo.DemoBoltBackend;
import io.sluice.server.demo.DemoHttpBackend;
import io.sluice.server.transport.EventLoopScheduler;
import io.sluice.server.transport.Sockets;
import io.sluice.server.transport.Transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.BindException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The standalone gateway: {@code java -jar sluice.jar [start] [-c FILE] [--watch] [--check] [--http-port N] [--bolt-port N] [--admin-port N] [--version]}.
 *
 * <p>Without {@code -c} it runs the embedded default: three demo HTTP backends in this process
 * (weights 1:2:3, free loopback ports) behind a listener on 127.0.0.1:2046. With {@code -c} it
 * runs that config and starts nothing else. SIGTERM and SIGINT drain in-flight requests (up to
 * {@code drain_timeout}) and exit 0. SIGHUP (like the admin {@code POST /reload}) re-reads the
 * {@code -c} file and applies it live; a bad file is reported and the running config stays.
 * {@code --watch} (or {@code watch_config} in the file) polls the {@code -c} file and reloads it
 * the same way when its content changes.
 *
 * <p>Exit codes: 0 clean stop (or a config that passed {@code --check}, {@code --help},
 * {@code --version}), 1 runtime failure (for example a port already in use: the message names the
 * address and port), 2 invalid config or command line (the port flags with {@code -c} included:
 * the file sets its ports).
 */
public final class Main {

    /** The port of the HTTP listener of the embedded default config. */
    public static final int DEFAULT_HTTP_PORT = 2046;
    /** The port of the Bolt listener of the embedded default config. */
    public static final int DEFAULT_BOLT_PORT = 12200;

    static final int EXIT_OK = 0;
    static final int EXIT_FAILURE = 1;
    static final int EXIT_USAGE = 2;

    private static final String USAGE = """
            usage: sluice [start] [-c FILE] [--watch] [--no-warm-up] [--check] [--http-port N] [--bolt-port N] [--admin-port N]
                          [--version] [--help]
              (no -c)          run the embedded default: 3 demo HTTP backends (weights 1:2:3) behind
                               http://127.0.0.1:2046/, a demo Bolt backend behind 127.0.0.1:12200
              -c, --config F   run the gateway described by the JSON file F (native or MOSN format)
              --watch          reload the -c file when it changes (polls it; see watch_config in docs/config.md)
              --no-warm-up     accept at once, without the synthetic warm-up (see warm_up in docs/config.md)
              --check          validate the config, print a summary and exit (0 = valid, 2 = invalid)
              --http-port N    port of the default config's HTTP listener (default 2046; 0 = any free port)
              --bolt-port N    port of the default config's Bolt listener (default 12200; 0 = any free port)
              --admin-port N   port of the default config's admin API (default 34901; 0 = any free port)
                               (the three port flags are for the embedded default only: with -c they are
                               an error, the file sets its ports)
              -V, --version    print the version and exit
              -h, --help       this text
            exit codes: 0 ok, 1 runtime failure, 2 invalid config or arguments
            """;

    private Main() {
    }

    public static void main(String[] args) {
        defaultLeakDetection();
        // exit explicitly: libraries (the bolt demo backend) may leave non-daemon threads behind
        System.exit(run(args, System.out, System.err));
    }

    /**
     * The standalone gateway runs without Netty's buffer leak detector unless asked for one with
     * {@code -Dio.netty.leakDetection.level=simple|advanced|paranoid}: the default "simple" level
     * records a stack trace for one buffer allocation in 128, a cost on every proxied request. The
     * test suite runs at PARANOID and fails on any leak, which is where leaks are caught.
     */
    static void defaultLeakDetection() {
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
    }

    /** Parsed command line. */
    record Options(Path config, boolean check, int httpPort, int boltPort, int adminPort, boolean help, boolean watch,
                   boolean version, boolean noWarmUp) {
    }

    static Options parse(String[] args) {
        Path config = null;
        boolean check = false;
        boolean help = false;
        boolean watch = false;
        boolean version = false;
        boolean noWarmUp = false; // warm-up
        List<String> portFlags = new ArrayList<>();
        int httpPort = DEFAULT_HTTP_PORT;
        int adminPort = AdminConfig.DEFAULT_PORT;
        int boltPort = DEFAULT_BOLT_PORT;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "start" -> {
                    if (i != 0) {
                        throw new IllegalArgumentException("'start' must come first");
                    }
                }
                case "-c", "--config" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(a + " needs a file name");
                    }
                    config = Path.of(args[++i]);
                }
                case "--check" -> check = true;
                case "--watch" -> watch = true;
                case "--no-warm-up" -> noWarmUp = true; // warm-up
                case "-h", "--help" -> help = true;
                case "-V", "--version" -> version = true;
                case "--http-port" -> {
                    httpPort = port(args, ++i, a);
                    portFlags.add(a);
                }
                case "--admin-port" -> {
                    adminPort = port(args, ++i, a);
                    portFlags.add(a);
                }
                case "--bolt-port" -> {
                    boltPort = port(args, ++i, a);
                    portFlags.add(a);
                }
                default -> {
                    if (a.startsWith("--config=")) {
                        config = Path.of(a.substring("--config=".length()));
                    } else {
                        throw new IllegalArgumentException("unknown argument: " + a);
                    }
                }
            }
        }
        if (config != null && !portFlags.isEmpty()) {
            throw new IllegalArgumentException(String.join(", ", portFlags) + " set ports of the embedded default config;"
                    + " with -c the file sets its ports (edit it, or drop -c)");
        }
        return new Options(config, check, httpPort, boltPort, adminPort, help, watch, version, noWarmUp);
    }

    /**
     * The version: the jar manifest's {@code Implementation-Version} (the shaded jar), else the
     * Maven {@code pom.properties} packaged with gateway-server, else {@code "unknown"}.
     */
    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        if (v != null) {
            return v;
        }
        try (InputStream in = Main.class.getResourceAsStream("/META-INF/maven/io.sluice/gateway-server/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "unknown");
            }
        } catch (IOException e) {
            // unknown
        }
        return "unknown";
    }

    private static int port(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a port number");
        }
        try {
            int p = Integer.parseInt(args[i]);
            if (p >= 0 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(option + ": not a port number in 0..65535: " + args[i]);
    }

    /** Runs the CLI; returns the exit code. Blocks until a signal stops the gateway (unless --check). */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            err.println("sluice: " + e.getMessage());
            err.print(USAGE);
            return EXIT_USAGE;
        }
        if (o.help()) {
            out.print(USAGE);
            return EXIT_OK;
        }
        if (o.version()) {
            out.println("sluice " + version());
            return EXIT_OK;
        }
        GatewayConfig config;
        List<String> warnings = List.of();
        io.sluice.server.warmup.WarmUpConfig warmUp = io.sluice.server.warmup.WarmUpConfig.standaloneDefault(); // warm-up
        String source;
        try {
            if (o.config() != null) {
                if (!Files.isReadable(o.config())) {
                    err.println("sluice: cannot read config file " + o.config());
                    return EXIT_USAGE;
                }
                LoadedConfig loaded = ConfigLoader.load(o.config());
                config = loaded.config();
                warnings = loaded.warnings();
                warmUp = loaded.warmUp(); // warm-up
                source = o.config() + " (" + loaded.format().name().toLowerCase() + " format)";
            } else {
                config = null; // built once the demo backends have ports
                source = "embedded default";
            }
        } catch (ConfigException e) {
            err.println("sluice: invalid config " + o.config() + ": " + e.getMessage());
            return EXIT_USAGE;
        }
        for (String w : warnings) {
            err.println("sluice: warning: " + w);
        }
        if (o.check()) {
            if (config == null) {
                config = defaultConfig(List.of(0, 0, 0), 1, o);
            }
            out.println("config OK: " + source + ": " + config.listeners().size() + " listener(s), "
                    + config.clusters().size() + " cluster(s)");
            return EXIT_OK;
        }

        List<DemoHttpBackend> demo = new ArrayList<>();
        EventLoopGroup demoGroup = null;
        DemoBoltBackend demoBolt = null;
        Gateway gateway;
        try {
            if (config == null) {
                Transport t = Transport.select(TransportConfig.defaults());
                demoGroup = t.newGroup(1, "sluice-demo");
                List<Integer> ports = new ArrayList<>();
                for (int i = 1; i <= 3; i++) {
                    DemoHttpBackend b = DemoHttpBackend.start(t, demoGroup, "127.0.0.1", 0, "demo-" + i);
                    demo.add(b);
                    ports.add(b.port());
                }
                demoBolt = DemoBoltBackend.start("127.0.0.1", 0);
                config = defaultConfig(ports, demoBolt.port(), o);
            }
            Gateway.Builder builder = Gateway.builder().config(config)
                    .warmUp(o.noWarmUp() ? warmUp.withEnabled(false) : warmUp); // warm-up: on by default in the jar
            if (o.config() != null) {
                Path file = o.config();
                builder.reloadSource(() -> {
                    LoadedConfig loaded = ConfigLoader.load(file);
                    for (String w : loaded.warnings()) {
                        err.println("sluice: warning: " + w);
                    }
                    return loaded.config();
                });
            }
            gateway = builder.build();
            gateway.start().join();
        } catch (ConfigException e) {
            err.println("sluice: invalid config: " + e.getMessage());
            stopDemo(demo, demoGroup, demoBolt);
            return EXIT_USAGE;
        } catch (CompletionException | InterruptedException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            String why = cause instanceof BindException ? cause.getMessage() + " (is another process using the port?)"
                    : String.valueOf(cause);
            err.println("sluice: failed to start: " + why);
            stopDemo(demo, demoGroup, demoBolt);
            return EXIT_FAILURE;
        }

        Watch watch = null;
        if (o.config() != null) {
            // always there with a -c file, so that a reload can turn watch_config on; it polls only when on
            watch = Watch.start(gateway, o.config(), o.watch(), err);
        } else if (o.watch()) {
            err.println("sluice: --watch: nothing to watch (running the embedded default config, not a -c file)");
        }
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean stopping = new AtomicBoolean();
        EventLoopGroup dg = demoGroup;
        DemoBoltBackend db = demoBolt;
        Watch w = watch;
        Runnable stop = () -> {
            if (!stopping.compareAndSet(false, true)) {
                return;
            }
            if (w != null) {
                w.close(); // no reload while draining
            }
            err.println("sluice: stopping, draining in-flight requests (up to "
                    + gateway.config().drainTimeout().toMillis() + " ms)");
            try {
                gateway.shutdown().get(gateway.config().drainTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                err.println("sluice: shutdown did not complete cleanly: " + e);
            }
            stopDemo(demo, dg, db);
            err.println("sluice: stopped");
            stopped.countDown();
        };
        boolean ctrlC = Signals.onTermination(stop);
        Path configFile = o.config();
        Signals.onHangup(() -> reloadOnHangup(gateway, configFile, err));
        Thread hook = new Thread(stop, "sluice-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        // the banner last: whoever reads it may signal at once, and the handlers must be in place
        WatchConfig wc = gateway.config().watchConfig();
        boolean watching = o.config() != null && (o.watch() || wc.enabled());
        out.print(banner(gateway, source, !demo.isEmpty(), watching ? DurationFormat.format(wc.interval()) : null, ctrlC));
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return EXIT_OK;
    }

    /** SIGHUP: reload from the -c file; report the outcome; never exit. */
    static void reloadOnHangup(Gateway gateway, Path file, PrintStream err) {
        if (file == null) {
            err.println("sluice: SIGHUP: nothing to reload (running the embedded default config, not a -c file)");
            return;
        }
        reloadFile(gateway, file, err, "SIGHUP");
    }

    /**
     * Reloads the -c file through {@link Gateway#reload()}, which validates it completely, counts
     * {@code sluice.config.reloads{result}} and logs the one line about the outcome (with the trigger
     * and the file); only a failure that is not a config error is printed here.
     *
     * @param trigger what asked for it: {@code SIGHUP}, {@code config file changed}
     */
    static void reloadFile(Gateway gateway, Path file, PrintStream err, String trigger) {
        try {
            gateway.reload(trigger, file.toString()); // logs "TRIGGER: reloaded FILE: ..." itself
        } catch (ConfigException e) {
            // logged by the gateway: "TRIGGER: invalid config FILE, the running config stays (version N): ..."
        } catch (RuntimeException e) {
            err.println("sluice: " + trigger + ": reload of " + file + " failed, the running config stays: " + e);
        }
    }

    /**
     * The -c file's watcher and the thread it polls and reloads on (a reload reads the file and waits
     * for new listeners to bind: not work for an event loop of the data path). {@code --watch} turns
     * it on whatever {@code watch_config.enabled} says; the interval is always the running config's.
     */
    record Watch(ConfigWatcher watcher, DefaultEventExecutor executor) implements AutoCloseable {

        static Watch start(Gateway gateway, Path file, boolean force, PrintStream err) {
            DefaultEventExecutor executor = new DefaultEventExecutor(new DefaultThreadFactory("sluice-config-watch", true));
            ConfigWatcher watcher = new ConfigWatcher(file, new EventLoopScheduler(executor, Ticker.system()), () -> {
                WatchConfig w = gateway.config().watchConfig();
                return force ? w.withEnabled(true) : w;
            }, () -> reloadFile(gateway, file, err, "config file changed"));
            executor.execute(watcher::start); // the watcher's state lives on its thread
            return new Watch(watcher, executor);
        }

        @Override
        public void close() {
            watcher.close();
            executor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * The embedded default: HTTP listener "http" → cluster "demo" (the demo HTTP backends, weights
     * 1:2:3), Bolt listener "bolt" → cluster "demo-bolt" (the demo Bolt backend), admin API.
     */
    static GatewayConfig defaultConfig(List<Integer> demoPorts, int boltBackendPort, Options o) {
        List<HostConfig> hosts = new ArrayList<>();
        for (int i = 0; i < demoPorts.size(); i++) {
            hosts.add(new HostConfig("127.0.0.1", demoPorts.get(i) == 0 ? 1 + i : demoPorts.get(i), i + 1));
        }
        ListenerConfig http = new ListenerConfig("http", Protocol.HTTP, "127.0.0.1", o.httpPort(),
                List.of(RouteConfig.to("demo")), null, null);
        ListenerConfig bolt = new ListenerConfig("bolt", Protocol.BOLT, "127.0.0.1", o.boltPort(), List.of(), null,
                new BoltOptions(BoltOptions.defaults().maxFrameLength(), BoltOptions.defaults().idleTimeout(), "demo-bolt"));
        ClusterConfig demo = ClusterConfig.of("demo", hosts);
        ClusterConfig demoBolt = new ClusterConfig("demo-bolt", Protocol.BOLT, null,
                List.of(new HostConfig("127.0.0.1", boltBackendPort, 1)), null, null, null, null, null, null,
                ClusterConfig.DEFAULT_PANIC_THRESHOLD, false, 2, 1.0);
        return new GatewayConfig(List.of(http, bolt), List.of(demo, demoBolt), new AdminConfig(true, "127.0.0.1", o.adminPort()),
                TransportConfig.defaults(), Duration.ofSeconds(10));
    }

    /** @param watchInterval how often the -c file is polled, or null when it is not watched */
    /** @param ctrlC whether SIGINT stops the gateway (false when it was ignored at start: the banner says so) */
    static String banner(Gateway gw, String source, boolean demo, String watchInterval, boolean ctrlC) {
        StringBuilder sb = new StringBuilder();
        sb.append("sluice is running (").append(source).append(", transport ").append(gw.transport()).append(")\n");
        String firstHttp = null;
        for (ListenerConfig l : gw.config().listeners()) {
            int port = gw.port(l.name());
            sb.append("  listener  ").append(l.name()).append("  ")
                    .append(l.protocol() == Protocol.AUTO ? "http+bolt" : l.protocol().jsonName())
                    .append(l.tls() == null ? "" : "s").append("://").append(l.address()).append(':').append(port).append('\n');
            if (firstHttp == null && l.protocol() != Protocol.BOLT) {
                String addr = "0.0.0.0".equals(l.address()) ? "127.0.0.1" : l.address();
                firstHttp = (l.tls() == null ? "http://" : "https://") + addr + ":" + port + "/";
            }
        }
        if (gw.adminAddress() != null) {
            sb.append("  admin     http://").append(Sockets.format(gw.adminAddress())).append("/  (/metrics /ready /healthz /clusters /config, POST /reload)\n");
        }
        for (ClusterBalancer c : gw.clusters().values()) {
            sb.append("  cluster   ").append(c.name()).append("  ").append(c.config().lb().name().toLowerCase()).append(':');
            for (Host h : c.hosts()) {
                sb.append(' ').append(h.address()).append(" (weight ").append(h.weight()).append(')');
            }
            sb.append('\n');
        }
        if (demo) {
            sb.append("  demo backends run in this process: HTTP ones answer with their own port, the Bolt one\n")
                    .append("  answers sofaload's request (service com.alipay.test.TestService:1.0) and echoes strings\n");
        }
        String firstBolt = null;
        for (ListenerConfig l : gw.config().listeners()) {
            if (firstBolt == null && l.protocol() != Protocol.HTTP) {
                String addr = "0.0.0.0".equals(l.address()) ? "127.0.0.1" : l.address();
                firstBolt = "sofarpc://" + addr + ":" + gw.port(l.name());
            }
        }
        if (firstHttp != null) {
            sb.append("try:  curl -s ").append(firstHttp)
                    .append(demo ? "   (repeat it: answers rotate 1:2:3 across the backends)" : "").append('\n');
        }
        if (firstBolt != null) {
            sb.append("bolt:  java -jar gateway-bench/target/benchmarks.jar bolt-load -D 5 -c 8 -m 4 -t 2 ").append(firstBolt)
                    .append("   (or sofaload with the same options and -p sofarpc)\n");
        }
        sb.append(ctrlC ? "stop:  Ctrl-C or SIGTERM" : "stop:  SIGTERM (kill " + ProcessHandle.current().pid()
                        + "; Ctrl-C does not reach this process: SIGINT was ignored when it started)")
                .append(" (drains in-flight requests); reload the -c file: SIGHUP or POST /reload")
                .append(watchInterval == null ? "" : ", or just save it (watched every " + watchInterval + ")").append('\n');
        return sb.toString();
    }

    private static void stopDemo(List<DemoHttpBackend> demo, EventLoopGroup group, DemoBoltBackend bolt) {
        if (bolt != null) {
            bolt.close();
        }
        for (DemoHttpBackend b : demo) {
            b.close();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
