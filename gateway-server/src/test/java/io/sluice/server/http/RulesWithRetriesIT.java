package io.sluice.server.http;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HeaderRules;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RequestTracing;
import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteRules;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.SocketServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Route rules meet retries (merge of the traffic and resilience features): every attempt's head is
 * built with the header rules, the request id and the traceparent (the same ids on each attempt,
 * {@code %UPSTREAM_HOST%} the attempt's host), and a request the route tunnels is never retried.
 * The backends are plain sockets that answer the first request of all with 503, the rest with 200.
 */
@Timeout(30)
class RulesWithRetriesIT {

    static final HttpClient client = HttpClient.newHttpClient();

    /** Two ports sharing one script: request 0 of all gets 503, later ones 200; each head is recorded. */
    static final class Script implements AutoCloseable {
        final AtomicInteger served = new AtomicInteger();
        final List<String> heads = new CopyOnWriteArrayList<>();
        final SocketServer a;
        final SocketServer b;

        Script() throws Exception {
            a = new SocketServer("script-a", 50, (s, i) -> serve(s, "a"));
            b = new SocketServer("script-b", 50, (s, i) -> serve(s, "b"));
        }

        private void serve(Socket s, String who) {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                while (true) {
                    ByteArrayOutputStream head = new ByteArrayOutputStream();
                    int last4 = 0;
                    int c;
                    while ((c = in.read()) >= 0) {
                        head.write(c);
                        last4 = (last4 << 8) | c;
                        if (last4 == 0x0d0a0d0a) {
                            break;
                        }
                    }
                    if (c < 0) {
                        return;
                    }
                    heads.add(who + "\n" + head.toString(StandardCharsets.ISO_8859_1));
                    String answer = served.getAndIncrement() == 0
                            ? "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
                            : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                    out.write(answer.getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            } catch (Exception e) {
                // the gateway closed the connection
            }
        }

        @Override
        public void close() throws Exception {
            a.close();
            b.close();
        }
    }

    private static Gateway start(Script s) {
        ClusterConfig c = ClusterConfig.builder().name("c").hosts(List.of(new HostConfig("127.0.0.1", s.a.port(), 1),
                new HostConfig("127.0.0.1", s.b.port(), 1))).build();
        RouteRules rules = RouteRules.builder().requestHeaders(new HeaderRules(List.of(),
                List.of(new HeaderRules.Header("x-up", "%UPSTREAM_HOST%"), new HeaderRules.Header("x-id", "%REQUEST_ID%")),
                List.of())).build();
        RouteConfig route = RouteConfig.to("c").withRetryPolicy(RetryPolicyConfig.builder().retryOn(RetryOn.FIVE_XX)
                .numRetries(1).baseInterval(Duration.ofMillis(1)).maxInterval(Duration.ofMillis(2)).build()).withRules(rules);
        HttpOptions o = HttpOptions.builder().tracing(new RequestTracing(true, false, true)).build();
        GatewayConfig config = GatewayConfig.builder().listeners(ListenerConfig.builder().name("web").http(o).routes(route).build())
                .clusters(c).admin(AdminConfig.disabled()).build();
        return GatewayFixture.start(config);
    }

    private static String header(String head, String name) {
        Matcher m = Pattern.compile("(?im)^" + name + ": *(.*?)\r?$").matcher(head);
        return m.find() ? m.group(1) : null;
    }

    @Test
    void everyAttemptCarriesTheRulesAndTheSameIds() throws Exception {
        try (Script s = new Script(); Gateway g = start(s)) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/x"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(s.heads).hasSize(2);
            String first = s.heads.get(0);
            String second = s.heads.get(1);
            String firstHost = "127.0.0.1:" + (first.startsWith("a") ? s.a.port() : s.b.port());
            String secondHost = "127.0.0.1:" + (second.startsWith("a") ? s.a.port() : s.b.port());
            assertThat(header(first, "x-up")).isEqualTo(firstHost);
            assertThat(header(second, "x-up")).as("the retry's own host").isEqualTo(secondHost);
            assertThat(header(first, "x-request-id")).isNotNull().isEqualTo(header(second, "x-request-id"))
                    .isEqualTo(header(second, "x-id"));
            assertThat(header(first, "traceparent")).isNotNull().isEqualTo(header(second, "traceparent"));
            assertThat(header(second, "x-sluice-attempt")).isEqualTo("2");
            assertThat(second.toLowerCase()).containsOnlyOnce("\nx-request-id:").containsOnlyOnce("\ntraceparent:")
                    .containsOnlyOnce("\nx-up:");
        }
    }

    @Test
    void anUpgradeRequestIsNotRetried() throws Exception {
        try (Script s = new Script(); Gateway g = start(s); RawClient c = new RawClient(g.port("web"))) {
            c.send("GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
            assertThat(c.readHead().status()).isEqualTo(503);
            assertThat(s.heads).hasSize(1);
            assertThat(s.heads.get(0).toLowerCase()).contains("\nupgrade: websocket").doesNotContain("x-sluice-attempt");
        }
    }
}
