package io.sluice.server.http;

import io.sluice.core.config.AccessLogConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HeaderRules;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RequestTracing;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Header rules, Host and path rewrites, request ids and trace context through the gateway to a
 * real backend ({@code /headers} answers with the head it received), and the trace id in the
 * access log.
 */
@Timeout(30)
class TrafficHeadersIT {

    static final HttpClient client = HttpClient.newHttpClient();
    static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

    private static RouteConfig route(String prefix, RouteRules p, String prefixRewrite) {
        return new RouteConfig(prefix.substring(1), new RouteMatch(List.of(), StringMatch.prefix(prefix), List.of(), List.of(),
                null, null), "c", prefixRewrite, null, null, null, p);
    }

    private static HttpResponse<String> get(Gateway g, String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(GatewayFixture.uri(g, path)).timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void rulesRewritesIdsAndTraceContext(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("access.log");
        try (TestBackend b = TestBackend.start()) {
            RouteRules rules = RouteRules.builder()
                    .requestHeaders(new HeaderRules(List.of(new HeaderRules.Header("x-client", "%DOWNSTREAM_REMOTE_ADDRESS%")),
                            List.of(new HeaderRules.Header("x-gw", "gw-%ROUTE_NAME% 100%% %REQUEST_ID%")), List.of("x-internal")))
                    .responseHeaders(new HeaderRules(List.of(new HeaderRules.Header("x-served-by", "%UPSTREAM_HOST%")),
                            List.of(new HeaderRules.Header("x-trace", "%TRACE_ID%")), List.of("content-type")))
                    .hostRewrite("rewritten.example").build();
            RouteRules upstreamHost = RouteRules.builder().hostRewriteToUpstream(true)
                    .regexRewrite(new RouteRules.RegexRewrite("^/rx/(\\w+)/v\\d$", "/$1")).build();
            ClusterConfig c = ClusterConfig.of("c", List.of(GatewayFixture.host(b, 1))).toBuilder()
                    .headers(new ClusterConfig.ClusterHeaders(new HeaderRules(List.of(new HeaderRules.Header("x-cluster",
                            "c@%UPSTREAM_HOST%")), List.of(), List.of("x-cluster-drop")), null)).build();
            HttpOptions o = HttpOptions.builder().tracing(new RequestTracing(true, true, true)).build();
            ListenerConfig l = ListenerConfig.builder().name("web").http(o).routes(
                    route("/rules", rules, "/headers"), route("/rx", upstreamHost, null), RouteConfig.to("c")).build();
            GatewayConfig config = GatewayFixture.simple(List.of(GatewayFixture.host(b, 1)), o).toBuilder()
                    .listeners(l).clusters(c).build().withAccessLog(new AccessLogConfig(true, log.toString(), "text", 1024));
            try (Gateway g = GatewayFixture.start(config)) {
                // request rules: set replaces the client's copies, add keeps them, remove drops; host rewrite
                HttpResponse<String> r = get(g, "/rules", "x-gw", "evil", "x-client", "theirs", "x-internal", "secret",
                        "traceparent", "00-" + TRACE + "-00f067aa0ba902b7-00");
                String seen = r.body();
                String id = r.headers().firstValue("x-request-id").orElseThrow();
                assertThat(id).matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
                assertThat(seen).startsWith("GET /headers ").contains("\nx-gw: gw-rules 100% " + id + "\n")
                        .doesNotContain("evil").doesNotContain("x-internal").contains("\nx-client: theirs\n")
                        .contains("\nx-client: 127.0.0.1\n").contains("\nhost: rewritten.example\n")
                        .contains("\nx-request-id: " + id + "\n");
                // the cluster's rules apply too (before the route's)
                assertThat(seen).contains("\nx-cluster: c@127.0.0.1:" + b.port() + "\nx-gw: ");
                // traceparent continued: same trace id and flags, a new span id
                String tp = line(seen, "traceparent");
                assertThat(tp).matches("00-" + TRACE + "-[0-9a-f]{16}-00").doesNotContain("00f067aa0ba902b7");
                // response rules
                assertThat(r.headers().firstValue("x-served-by")).hasValue("127.0.0.1:" + b.port());
                assertThat(r.headers().firstValue("x-trace")).hasValue(TRACE);
                assertThat(r.headers().firstValue("content-type")).isEmpty();

                // a client's id is kept; a malformed traceparent is replaced by a new sampled trace
                r = get(g, "/headers", "x-request-id", "abc-123", "traceparent", "00-zz-garbage", "x-cluster-drop", "1");
                assertThat(r.body()).contains("\nx-cluster: c@").doesNotContain("x-cluster-drop");
                assertThat(r.body()).contains("\nx-request-id: abc-123\n").doesNotContain("garbage");
                assertThat(r.headers().firstValue("x-request-id")).hasValue("abc-123");
                assertThat(line(r.body(), "traceparent")).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
                // none sent: created
                r = get(g, "/headers");
                String created = line(r.body(), "traceparent");
                assertThat(created).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");

                // Host to the upstream's address; path regex rewrite (query kept)
                r = get(g, "/rx/headers/v2?q=1");
                assertThat(r.body()).startsWith("GET /headers?q=1 ").contains("\nhost: 127.0.0.1:" + b.port() + "\n");
                assertThat(r.headers().firstValue("x-served-by")).isEmpty(); // rules are per route
                client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/x")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.discarding());
                // the trace id of every request is in its access-log line
                String createdTrace = created.substring(3, 35);
                g.close();
                List<String> lines = Files.readAllLines(log);
                assertThat(lines).hasSize(5);
                assertThat(lines.get(0)).endsWith("us " + TRACE);
                assertThat(lines.get(2)).endsWith("us " + createdTrace);
                assertThat(lines.get(4)).matches(".*us [0-9a-f]{32}");
            }
        }
    }

    private static String line(String head, String name) {
        for (String l : head.split("\n")) {
            if (l.startsWith(name + ": ")) {
                return l.substring(name.length() + 2);
            }
        }
        return null;
    }
}
