package io.sluice.server;

import io.sluice.server.testing.GatewayProcess;
import io.sluice.server.testing.TestBackend;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sluice -c FILE --watch} as a user runs it (the shaded jar in its own JVM, real backends,
 * the JDK HTTP client): saving the file moves the traffic to the new backend, an invalid save is
 * rejected with the JSON path while traffic keeps flowing to the running config, and the reloads
 * count in {@code sluice_config_reloads_total}. Real time, a 200 ms poll; every wait polls for the
 * effect with a generous deadline.
 */
class ConfigWatchIT {

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<String> output = new ArrayList<>();

    private static String config(TestBackend backend, String weight) {
        // watch_config says off: --watch turns it on anyway; the interval is the file's
        return """
                {"listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "api"}]}],
                 "clusters": [{"name": "api", "hosts": [{"address": "127.0.0.1:%d", "weight": %s}]}],
                 "admin": {"port": 0},
                 "watch_config": {"enabled": false, "interval": "200ms"}}
                """.formatted(backend.port(), weight);
    }

    /** Saves like an editor does: a temporary file renamed over the old one. */
    private static void save(Path file, String content) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, content);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void savingTheFileReloadsItAndAnInvalidSaveIsRejectedWhileTrafficContinues(@TempDir Path dir) throws Exception {
        assertThat(GatewayProcess.JAR).exists();
        try (TestBackend a = TestBackend.start(); TestBackend b = TestBackend.start()) {
            Path file = dir.resolve("sluice.json");
            Files.writeString(file, config(a, "1"));
            try (GatewayProcess p = GatewayProcess.start("-c", file.toString(), "--watch")) {
                BlockingQueue<String> out = p.lines();
                int port = Integer.parseInt(await(out, Pattern.compile("listener\\s+web\\s+http://127\\.0\\.0\\.1:(\\d+)")));
                int admin = Integer.parseInt(await(out, Pattern.compile("admin\\s+http://127\\.0\\.0\\.1:(\\d+)/")));
                assertThat(await(out, Pattern.compile("^stop:.*(watched every 200ms)"))).isNotNull();
                URI web = URI.create("http://127.0.0.1:" + port + "/");
                assertThat(get(web).body()).isEqualTo("ok from " + a.port());

                // a valid save: the cluster now points at b
                save(file, config(b, "1"));
                awaitBody(web, "ok from " + b.port());
                assertThat(await(out, Pattern.compile("config file changed: (reloaded .*)"))).contains("config version 2", "updated [api]");

                // an invalid save: rejected with the path and the value, b keeps serving
                save(file, config(a, "-5"));
                String rejected = await(out, Pattern.compile("config file changed: (invalid config .*)"));
                assertThat(rejected).contains("the running config stays", "$.clusters[0].hosts[0].weight", "-5");
                for (int i = 0; i < 20; i++) {
                    HttpResponse<String> r = get(web);
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(r.body()).isEqualTo("ok from " + b.port());
                }
                String metrics = get(URI.create("http://127.0.0.1:" + admin + "/metrics")).body();
                assertThat(metrics).contains("sluice_config_reloads_total{result=\"success\"} 1.0",
                        "sluice_config_reloads_total{result=\"failure\"} 1.0", "sluice_config_version 2.0");

                // fixed: applied
                save(file, config(a, "2"));
                awaitBody(web, "ok from " + a.port());
                assertThat(await(out, Pattern.compile("config file changed: (reloaded .*)"))).contains("config version 3");

                p.collectGarbage(); // buffers leaked so far are reported on the next allocation
                assertThat(get(web).statusCode()).isEqualTo(200);
                assertThat(p.terminate(Duration.ofSeconds(30))).as(p.output()).isZero(); // SIGTERM: drain, exit 0
            }
        }
    }

    private HttpResponse<String> get(URI uri) throws Exception {
        return client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Sends requests until one answers {@code body} (every answer on the way must be a 200 from a backend). */
    private void awaitBody(URI uri, String body) {
        Awaitility.await().atMost(DEADLINE).pollInterval(Duration.ofMillis(25)).untilAsserted(() -> {
            HttpResponse<String> r = get(uri);
            if (r.statusCode() != 200) { // fails at once: traffic must not break while the config changes
                throw new IllegalStateException("status " + r.statusCode() + ": " + r.body());
            }
            assertThat(r.body()).as("output so far:%n%s", String.join("\n", output)).isEqualTo(body);
        });
    }

    /** Waits for a line matching {@code pattern}; returns its first group (or the line). */
    private String await(BlockingQueue<String> q, Pattern pattern) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            String line = q.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                synchronized (output) {
                    output.add(line);
                }
                Matcher m = pattern.matcher(line);
                if (m.find()) {
                    return m.groupCount() > 0 ? m.group(1) : line;
                }
            }
        }
        throw new AssertionError("no line matching " + pattern + " in:\n" + String.join("\n", output));
    }
}
