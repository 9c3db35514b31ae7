package io.sluice.server.accesslog;

import io.sluice.core.config.AccessLogConfig;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** One access-log line per request, written off the event loops, to a file, in JSON or text. */
class AccessLogIT {

    @Test
    void everyRequestGetsOneJsonLineWithItsOutcome(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("access.log");
        try (TestBackend b = TestBackend.start()) {
            HttpClient client = HttpClient.newHttpClient();
            int port;
            try (Gateway g = GatewayFixture.start(GatewayFixture.simple(b)
                    .withAccessLog(new AccessLogConfig(true, file.toString(), "json", 1024)))) {
                port = b.port();
                client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/download?bytes=5000"))
                        .timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/status/503")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/x?a=1")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
            } // close drains and flushes the log
            List<String> lines = Files.readAllLines(file);
            assertThat(lines).hasSize(3);
            assertThat(lines.get(0)).contains("\"listener\":\"web\"", "\"protocol\":\"http\"", "\"client\":\"127.0.0.1\"",
                    "\"request\":\"GET /download?bytes=5000\"", "\"status\":200", "\"outcome\":\"proxied\"",
                    "\"upstream\":\"127.0.0.1:" + port + "\"", "\"bytes_out\":5000", "\"duration_us\":");
            assertThat(lines.get(1)).contains("\"status\":503", "\"outcome\":\"proxied\"");
            assertThat(lines.get(2)).startsWith("{\"time\":\"").contains("\"request\":\"GET /x?a=1\"").endsWith("}");
        }
    }

    @Test
    void textFormatAndConfigFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("a.log");
        String json = """
                {"listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "c"}]}],
                 "clusters": [{"name": "c", "hosts": ["127.0.0.1:1"]}],
                 "admin": {"enabled": false},
                 "access_log": {"path": "%s", "format": "text"}}""".formatted(file.toString().replace("\\", "\\\\"));
        var config = ConfigLoader.parse(json, "t.json").config();
        assertThat(config.accessLog().enabled()).isTrue();
        try (Gateway g = GatewayFixture.start(config)) {
            HttpClient.newHttpClient().send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/nothing"))
                    .timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
        List<String> lines = Files.readAllLines(file);
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).matches("\\S+ web http 127\\.0\\.0\\.1 \"GET /nothing\" 502 connect_failure 127\\.0\\.0\\.1:1 0 \\d+us -");
    }

    @Test
    void boltRequestsAreLoggedWithServiceAndUpstream(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bolt.log");
        io.sluice.server.demo.DemoBoltBackend backend = io.sluice.server.demo.DemoBoltBackend.start("127.0.0.1", 0);
        com.alipay.remoting.rpc.RpcClient client = new com.alipay.remoting.rpc.RpcClient();
        client.startup();
        String json = """
                {"listeners": [{"name": "rpc", "protocol": "bolt", "port": 0, "bolt": {"default_cluster": "b"}}],
                 "clusters": [{"name": "b", "protocol": "bolt", "hosts": ["127.0.0.1:%d"]}],
                 "admin": {"enabled": false},
                 "access_log": {"path": "%s", "format": "text"}}""".formatted(backend.port(),
                file.toString().replace("\\", "\\\\"));
        try (Gateway g = GatewayFixture.start(ConfigLoader.parse(json, "t.json").config())) {
            Object r = client.invokeSync("127.0.0.1:" + g.port("rpc"), "hello", 3000);
            assertThat(r).isNotNull();
        } finally {
            client.shutdown();
            backend.close();
        }
        List<String> lines = Files.readAllLines(file);
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).matches("\\S+ rpc bolt 127\\.0\\.0\\.1 \"-\" 0 proxied 127\\.0\\.0\\.1:"
                + backend.port() + " 0 \\d+us -");
    }
}
