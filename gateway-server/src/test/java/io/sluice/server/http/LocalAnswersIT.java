package io.sluice.server.http;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Redirects and direct responses: answered by the route itself, no upstream involved, keep-alive kept. */
@Timeout(30)
class LocalAnswersIT {

    private static RouteConfig local(String prefix, RouteRules p) {
        return new RouteConfig(prefix.substring(1), new RouteMatch(List.of(), StringMatch.prefix(prefix), List.of(), List.of(),
                null, null), null, null, null, null, null, p);
    }

    @Test
    void redirectsAndDirectResponses() throws Exception {
        try (TestBackend b = TestBackend.start()) {
            ClusterConfig c = ClusterConfig.of("c", List.of(GatewayFixture.host(b, 1)));
            ListenerConfig l = ListenerConfig.builder().name("web").routes(
                    local("/old/", RouteRules.builder().redirect(new RouteRules.Redirect(null, null, 0, null, "/new/",
                            false, 308, false)).build()),
                    local("/secure", RouteRules.builder().redirect(new RouteRules.Redirect(null, null, 0, null, null,
                            true, 0, false)).build()),
                    local("/moved", RouteRules.builder().redirect(new RouteRules.Redirect("https", "other.example", 8443,
                            "/landing", null, false, 302, true)).build()),
                    local("/gone", RouteRules.builder().directResponse(new RouteRules.DirectResponse(410, "gone for good",
                            null)).build()),
                    local("/empty", RouteRules.builder().directResponse(new RouteRules.DirectResponse(204, null, null)).build()),
                    RouteConfig.to("c")).build();
            GatewayConfig config = GatewayFixture.simple(List.of(GatewayFixture.host(b, 1)), HttpOptions.defaults()).toBuilder()
                    .listeners(l).clusters(c).build();
            try (Gateway g = GatewayFixture.start(config)) {
                HttpClient client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
                int port = g.port("web");
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/old/a/b?x=1"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(308);
                assertThat(r.headers().firstValue("location")).hasValue("http://127.0.0.1:" + port + "/new/a/b?x=1");
                r = client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/secure/p?q")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(301);
                assertThat(r.headers().firstValue("location")).hasValue("https://127.0.0.1/secure/p?q");
                r = client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/moved?drop=1")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(302);
                assertThat(r.headers().firstValue("location")).hasValue("https://other.example:8443/landing");
                r = client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/gone")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(410);
                assertThat(r.body()).isEqualTo("gone for good");
                assertThat(r.headers().firstValue("content-type")).hasValue("text/plain; charset=utf-8");
                assertThat(b.requests()).isZero();

                // a request body left unread: answered, then the connection closes (as for the gateway's errors)
                try (RawClient raw = new RawClient(port)) {
                    raw.send("POST /gone HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc");
                    RawClient.Response post = raw.read();
                    assertThat(post.status()).isEqualTo(410);
                    assertThat(post.headers()).contains("connection: close");
                }
                // keep-alive goes on after local answers
                try (RawClient raw = new RawClient(port)) {
                    raw.send("HEAD /gone HTTP/1.1\r\nHost: h\r\n\r\nGET /empty HTTP/1.1\r\nHost: h\r\n\r\n"
                            + "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
                    RawClient.Response head = raw.readHead();
                    assertThat(head.status()).isEqualTo(410);
                    assertThat(head.headers()).containsIgnoringCase("content-length: 13");
                    assertThat(raw.read().status()).isEqualTo(204);
                    RawClient.Response proxied = raw.read();
                    assertThat(proxied.status()).isEqualTo(200);
                    assertThat(proxied.body()).startsWith("ok from");
                }
            }
        }
    }

    @Test
    void aRedirectOnATlsListenerKeepsHttps() {
        RouteConfig rc = local("/p", RouteRules.builder().redirect(new RouteRules.Redirect(null, null, 0, null, "/q",
                false, 302, false)).build());
        io.sluice.server.route.Route r = io.sluice.server.route.RouteTable.compile(List.of(rc), java.util.Map.of())
                .routeHttp(null, "/p/x", "GET", n -> null);
        RouteRules.Redirect red = r.rules().redirect();
        assertThat(LocalAnswers.location(red, r, "a.example:8443", "/p/x?y=1", true)).isEqualTo("https://a.example:8443/q/x?y=1");
        assertThat(LocalAnswers.location(red, r, "a.example:8080", "/p/x", false)).isEqualTo("http://a.example:8080/q/x");
        RouteRules.Redirect toHttp = new RouteRules.Redirect("http", null, 0, null, null, false, 301, false);
        assertThat(LocalAnswers.location(toHttp, r, "a.example:8443", "/p/x", true)).isEqualTo("http://a.example/p/x");
    }
}
