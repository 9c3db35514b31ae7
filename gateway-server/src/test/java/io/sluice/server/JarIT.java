package io.sluice.server;

import com.alipay.remoting.rpc.RpcClient;
import io.sluice.server.testing.ProcessOutput;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The shaded jar as a user runs it: a separate JVM process, its banner, its exit codes, its signals. */
class JarIT {

    private static final Path JAR = Path.of("target", "sluice.jar");

    private static Process start(String... args) throws IOException {
        return new ProcessBuilder(command(args)).redirectErrorStream(true).start();
    }

    private static List<String> command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** The lines of {@code out} up to and including the banner's last one ({@code stop: ...}), within 30 s. */
    private static List<String> banner(BlockingQueue<String> out) throws InterruptedException {
        List<String> lines = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            String line = out.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                lines.add(line);
                if (line.startsWith("stop:")) {
                    return lines;
                }
            }
        }
        throw new AssertionError("no banner within 30 s:\n" + String.join("\n", lines));
    }

    /** Every line of {@code out} until the process has exited (it was asked to), within 30 s. */
    private static List<String> rest(Process p, BlockingQueue<String> out) throws InterruptedException {
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        List<String> lines = new ArrayList<>();
        String line;
        while ((line = out.poll(1, TimeUnit.SECONDS)) != null) { // the reader drains the closed pipe promptly
            lines.add(line);
        }
        return lines;
    }

    @Test
    void aBoltClientConnectingToTheDemoBackendLogsNothing() throws Exception {
        Process p = start("--http-port", "0", "--bolt-port", "0", "--admin-port", "0");
        try {
            BlockingQueue<String> out = ProcessOutput.lines(p);
            List<String> banner = banner(out);
            Matcher m = Pattern.compile("cluster\\s+demo-bolt\\s.*127\\.0\\.0\\.1:(\\d+) \\(weight")
                    .matcher(String.join("\n", banner));
            assertThat(m.find()).as(String.join("\n", banner)).isTrue();
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

            p.toHandle().destroy(); // SIGTERM (Process.destroy() would also close the output we read)
            List<String> after = rest(p, out);
            String all = String.join("\n", after);
            // nothing between the banner and the drain, and none of bolt's per-connection lines at all
            assertThat(after).as(all).isNotEmpty();
            assertThat(after.get(0)).as(all).startsWith("sluice: stopping");
            assertThat(all).doesNotContain("Connection channel", "trigger user event", "Connection closed", "Close the connection",
                    "Remove and close", "com.caucho.hessian", "accessible", "No log util");
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void anIgnoredSigintIsReportedAtStart() throws Exception {
        Path sh = Path.of("/bin/sh");
        Assumptions.assumeTrue(Files.isExecutable(sh), "no /bin/sh to start the jar with SIGINT ignored");
        StringBuilder script = new StringBuilder("trap '' INT; exec");
        for (String arg : command("--http-port", "0", "--bolt-port", "0", "--admin-port", "0")) {
            script.append(" '").append(arg.replace("'", "'\\''")).append('\'');
        }
        Process p = new ProcessBuilder(sh.toString(), "-c", script.toString()).redirectErrorStream(true).start();
        try {
            BlockingQueue<String> out = ProcessOutput.lines(p);
            String banner = String.join("\n", banner(out));
            assertThat(banner).contains("SIGINT is ignored by this process (started in the background?): Ctrl-C will not"
                    + " stop it; stop it with SIGTERM (kill " + p.pid() + ")");
            assertThat(banner).contains("stop:  SIGTERM (kill " + p.pid() + "; Ctrl-C does not reach this process");

            p.toHandle().destroy(); // SIGTERM still drains and exits 0
            assertThat(rest(p, out)).contains("sluice: stopped");
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
        }
    }

    private static String all(Process p) throws Exception {
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void defaultConfigServesTheDemoBackendsOneTwoThreeAndStopsCleanlyOnSigterm() throws Exception {
        assertThat(JAR).exists();
        Process p = start("--http-port", "0", "--bolt-port", "0", "--admin-port", "0");
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            StringBuilder banner = new StringBuilder();
            String line;
            Integer port = null;
            Integer adminPort = null;
            Pattern listener = Pattern.compile("listener\\s+http\\s+http://127\\.0\\.0\\.1:(\\d+)");
            Pattern admin = Pattern.compile("admin\\s+http://127\\.0\\.0\\.1:(\\d+)/");
            while ((line = out.readLine()) != null) {
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

            HttpClient client = HttpClient.newHttpClient();
            Map<String, Integer> counts = new TreeMap<>();
            for (int i = 0; i < 60; i++) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).startsWith("hello from demo backend 127.0.0.1:");
                counts.merge(r.body().substring(r.body().indexOf('(')).trim(), 1, Integer::sum);
            }
            assertThat(counts).containsEntry("(demo-1)", 10).containsEntry("(demo-2)", 20).containsEntry("(demo-3)", 30);
            HttpResponse<String> metrics = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + adminPort + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.body()).contains("sluice_requests_total{");

            p.destroy(); // SIGTERM: drain, then exit 0
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
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
        Process p = start("-c", file.toString());
        try {
            BlockingQueue<String> out = ProcessOutput.lines(p);
            await(out, "stop:");
            Files.writeString(file, config.replace("\"weight\": 1", "\"weight\": 5"));
            hangup(p);
            assertThat(await(out, "SIGHUP:")).contains("reloaded", "config version 2", "updated [api]");

            Files.writeString(file, config.replace("\"weight\": 1", "\"weight\": -5"));
            hangup(p);
            assertThat(await(out, "SIGHUP:")).contains("invalid config", "$.clusters[0].hosts[0].weight", "-5");
            assertThat(p.isAlive()).isTrue();

            p.destroy();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void invalidConfigFailsFastWithExitCode2AndTheJsonPath(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, """
                {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "nope"}]}],
                 "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000"]}]}
                """);
        Process p = start("-c", bad.toString());
        String out = all(p);
        assertThat(p.exitValue()).as(out).isEqualTo(2);
        assertThat(out).contains("$.listeners[0].routes[0].cluster", "nope");

        Process check = start("--check", "-c", bad.toString());
        assertThat(all(check)).contains("$.listeners[0].routes[0].cluster");
        assertThat(check.exitValue()).isEqualTo(2);
    }

    @Test
    void checkAcceptsTheShippedExampleAndRejectsBadArguments() throws Exception {
        Process ok = start("--check", "-c", Path.of("..", "config", "sluice.json").toString());
        String out = all(ok);
        assertThat(ok.exitValue()).as(out).isZero();
        assertThat(out).contains("config OK");

        Process bad = start("--frobnicate");
        assertThat(all(bad)).contains("unknown argument: --frobnicate", "usage:");
        assertThat(bad.exitValue()).isEqualTo(2);
    }
}
