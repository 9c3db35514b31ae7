package io.sluice.server;

import com.alipay.remoting.rpc.RpcClient;
import io.sluice.server.testing.GatewayProcess;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The shaded jar as a user runs it: a separate JVM process, its banner, its exit codes, its signals. */
class JarIT {

    private static final Duration EXIT = Duration.ofSeconds(60);

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> get(String uri) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void defaultConfigServesTheDemoBackendsOneTwoThreeAndStopsCleanlyOnSigterm() throws Exception {
        assertThat(GatewayProcess.JAR).exists();
        try (GatewayProcess p = GatewayProcess.startWarm("--http-port", "0", "--bolt-port", "0", "--admin-port", "0")) {
            StringBuilder banner = new StringBuilder();
            Integer port = null;
            Integer adminPort = null;
            Pattern listener = Pattern.compile("listener\\s+http\\s+http://127\\.0\\.0\\.1:(\\d+)");
            Pattern admin = Pattern.compile("admin\\s+http://127\\.0\\.0\\.1:(\\d+)/");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                String line = p.lines().poll(100, TimeUnit.MILLISECONDS);
                if (line == null) {
                    continue;
                }
                banner.append(line).append('\n');
                Matcher m = listener.matcher(line);
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                }
                Matcher a = admin.matcher(line);
                if (a.find()) {
                    adminPort = Integer.parseInt(a.group(1));
                }
                if (line.startsWith("try:")) {
                    break;
                }
            }
            assertThat(port).as(banner.toString()).isNotNull();
            assertThat(adminPort).as(banner.toString()).isNotNull();
            assertThat(banner.toString()).contains("cluster   demo", "(weight 1)", "(weight 2)", "(weight 3)", "curl -s http://127.0.0.1:");
            // warm-up: on by default in the jar, done before the banner (the listeners bind after it)
            assertThat(banner.toString()).containsPattern("warm-up: \\d+ rounds, \\d+ HTTP \\+ \\d+ Bolt synthetic requests")
                    .doesNotContain("stopped: ");

            Map<String, Integer> counts = new TreeMap<>();
            for (int i = 0; i < 60; i++) {
                HttpResponse<String> r = get("http://127.0.0.1:" + port + "/");
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).startsWith("hello from demo backend 127.0.0.1:");
                counts.merge(r.body().substring(r.body().indexOf('(')).trim(), 1, Integer::sum);
            }
            assertThat(counts).containsEntry("(demo-1)", 10).containsEntry("(demo-2)", 20).containsEntry("(demo-3)", 30);
            // leaked buffers of the 60 requests are reported when the gateway next allocates one: the scrape
            p.collectGarbage();
            HttpResponse<String> metrics = get("http://127.0.0.1:" + adminPort + "/metrics");
            assertThat(metrics.body()).contains("sluice_requests_total{");

            assertThat(p.terminate(Duration.ofSeconds(30))).as(p.output()).isZero(); // SIGTERM: drain, then exit 0
        }
    }

    /** The banner's lines, up to its last one ({@code stop: ...}), within 30 s. */
    private static String banner(BlockingQueue<String> out) throws InterruptedException {
        StringBuilder lines = new StringBuilder();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            String line = out.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                lines.append(line).append('\n');
                if (line.startsWith("stop:")) {
                    return lines.toString();
                }
            }
        }
        throw new AssertionError("no banner within 30 s:\n" + lines);
    }

    @Test
    void aBoltClientConnectingToTheDemoBackendLogsNothing() throws Exception {
        try (GatewayProcess p = GatewayProcess.start("--http-port", "0", "--bolt-port", "0", "--admin-port", "0")) {
            String banner = banner(p.lines());
            Matcher m = Pattern.compile("cluster\\s+demo-bolt\\s.*127\\.0\\.0\\.1:(\\d+) \\(weight").matcher(banner);
            assertThat(m.find()).as(banner).isTrue();
            String backend = "127.0.0.1:" + m.group(1);

            RpcClient client = new RpcClient();
            client.startup();
            try {
                for (int i = 0; i < 3; i++) { // a new connection each time: the last one is closed first
                    assertThat(client.invokeSync(backend, "hello " + i, 5_000)).isEqualTo("hello " + i);
                    client.closeConnection(backend);
                }
            } finally {
                client.shutdown();
            }
            assertThat(p.sigterm(EXIT)).as(p.output()).isZero();
            String all = p.output();
            String after = all.substring(all.indexOf(banner) + banner.length());
            // nothing between the banner and the drain, and none of bolt's per-connection lines at all
            assertThat(after).as(all).startsWith("sluice: stopping");
            assertThat(all).doesNotContain("Connection channel", "trigger user event", "Connection closed", "Close the connection",
                    "Remove and close", "com.caucho.hessian", "accessible", "No log util");
        }
    }

    @Test
    void anIgnoredSigintIsReportedAtStart() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/bin/sh")), "no /bin/sh to start the jar with SIGINT ignored");
        try (GatewayProcess p = GatewayProcess.startWithSigintIgnored("--http-port", "0", "--bolt-port", "0",
                "--admin-port", "0")) {
            long pid = p.process().pid();
            String banner = banner(p.lines());
            assertThat(banner).contains("SIGINT is ignored by this process (started in the background?): Ctrl-C will not"
                    + " stop it; stop it with SIGTERM (kill " + pid + ")");
            assertThat(banner).contains("stop:  SIGTERM (kill " + pid + "; Ctrl-C does not reach this process");
            assertThat(p.sigterm(EXIT)).as(p.output()).isZero(); // SIGTERM still drains and exits 0
            assertThat(p.output()).contains("sluice: stopped");
        }
    }

    private static String await(BlockingQueue<String> q, String text) throws InterruptedException {
        StringBuilder seen = new StringBuilder();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            String line = q.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                seen.append(line).append('\n');
                if (line.contains(text)) {
                    return line;
                }
            }
        }
        throw new AssertionError("no line containing \"" + text + "\" in:\n" + seen);
    }

    private static void hangup(Process p) throws Exception {
        Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(p.pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }

    @Test
    void sighupReloadsTheConfigFileAndSurvivesABadOne(@TempDir Path dir) throws Exception {
        // under nohup the gateway inherits an ignored SIGHUP and rightly cannot reload on it
        Assumptions.assumeFalse(Signals.ignoredAtStart(1), "SIGHUP is ignored here (nohup)");
        Path file = dir.resolve("sluice.json");
        String config = """
                {"listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "api"}]}],
                 "clusters": [{"name": "api", "hosts": [{"address": "127.0.0.1:9", "weight": 1}]}],
                 "admin": {"port": 0}}
                """;
        Files.writeString(file, config);
        try (GatewayProcess p = GatewayProcess.start("-c", file.toString())) {
            BlockingQueue<String> out = p.lines();
            await(out, "stop:");
            Files.writeString(file, config.replace("\"weight\": 1", "\"weight\": 5"));
            hangup(p.process());
            assertThat(await(out, "SIGHUP:")).contains("reloaded", "config version 2", "updated [api]");

            Files.writeString(file, config.replace("\"weight\": 1", "\"weight\": -5"));
            hangup(p.process());
            assertThat(await(out, "SIGHUP:")).contains("invalid config", "$.clusters[0].hosts[0].weight", "-5");
            assertThat(p.process().isAlive()).isTrue();

            assertThat(p.terminate(Duration.ofSeconds(30))).as(p.output()).isZero();
        }
    }

    @Test
    void invalidConfigFailsFastWithExitCode2AndTheJsonPath(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, """
                {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "nope"}]}],
                 "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000"]}]}
                """);
        try (GatewayProcess p = GatewayProcess.start("-c", bad.toString())) {
            assertThat(p.awaitExit(EXIT)).as(p.output()).isEqualTo(2);
            assertThat(p.output()).contains("$.listeners[0].routes[0].cluster", "nope");
        }
        try (GatewayProcess check = GatewayProcess.start("--check", "-c", bad.toString())) {
            assertThat(check.awaitExit(EXIT)).as(check.output()).isEqualTo(2);
            assertThat(check.output()).contains("$.listeners[0].routes[0].cluster");
        }
    }

    @Test
    void checkAcceptsTheShippedExampleAndRejectsBadArguments() throws Exception {
        try (GatewayProcess ok = GatewayProcess.start("--check", "-c", Path.of("..", "config", "sluice.json").toString())) {
            assertThat(ok.awaitExit(EXIT)).as(ok.output()).isZero();
            assertThat(ok.output()).contains("config OK");
        }
        try (GatewayProcess bad = GatewayProcess.start("--frobnicate")) {
            assertThat(bad.awaitExit(EXIT)).as(bad.output()).isEqualTo(2);
            assertThat(bad.output()).contains("unknown argument: --frobnicate", "usage:");
        }
    }
}
