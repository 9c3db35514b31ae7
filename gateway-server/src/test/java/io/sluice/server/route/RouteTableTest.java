package io.sluice.server.route;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HeaderMatch;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.StringMatch;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

class RouteTableTest {

    private final Map<String, ClusterBalancer> clusters = new LinkedHashMap<>();

    RouteTableTest() {
        for (String name : List.of("api", "shop", "admin", "static", "rpc", "fallback", "any-rpc")) {
            ClusterConfig c = ClusterConfig.of(name, List.of(new HostConfig("127.0.0.1", 1, 1)));
            clusters.put(name, ClusterBalancer.create(name.endsWith("rpc") ? c.withProtocol(Protocol.BOLT) : c,
                    new LbContext(new ManualScheduler(), new SplittableRandom(1))));
        }
    }

    private static RouteConfig route(String name, RouteMatch m, String cluster) {
        return new RouteConfig(name, m, cluster, null, null);
    }

    private static RouteMatch match(List<String> hosts, StringMatch path, List<String> methods, List<HeaderMatch> headers) {
        return new RouteMatch(hosts, path, methods, headers, null, null);
    }

    private static final Function<String, String> NO_HEADERS = h -> null;

    private RouteTable table() {
        return RouteTable.compile(List.of(
                route("admin-by-header", match(null, StringMatch.prefix("/api"), null,
                        List.of(new HeaderMatch("X-Role", StringMatch.exact("admin")))), "admin"),
                route("api", match(null, StringMatch.prefix("/api/"), List.of("get", "POST"), null), "api"),
                route("shop", match(List.of("shop.example.com", "*.shop.example.com"), null, null, null), "shop"),
                route("static", match(null, StringMatch.regex("/.*\\.(css|js|png)"), null, null), "static"),
                route("health", match(null, StringMatch.exact("/healthz"), null, null), "fallback"),
                route("rpc", new RouteMatch(null, null, null, null, StringMatch.prefix("com.example."), StringMatch.exact("sayHello")), "rpc")
        ), clusters);
    }

    @Test
    void firstMatchWinsInConfigOrder() {
        RouteTable t = table();
        Function<String, String> admin = h -> h.equals("x-role") ? "admin" : null;
        assertThat(t.routeHttp("a.com", "/api/users", "GET", admin).name()).isEqualTo("admin-by-header");
        assertThat(t.routeHttp("a.com", "/api/users", "GET", NO_HEADERS).name()).isEqualTo("api");
        // /api/x.css matches both api and static; api comes first
        assertThat(t.routeHttp("a.com", "/api/x.css", "GET", NO_HEADERS).name()).isEqualTo("api");
    }

    @Test
    void methodsAreCaseInsensitiveInConfigAndFilterRequests() {
        RouteTable t = table();
        assertThat(t.routeHttp(null, "/api/users", "GET", NO_HEADERS).cluster().name()).isEqualTo("api");
        assertThat(t.routeHttp(null, "/api/users", "POST", NO_HEADERS).cluster().name()).isEqualTo("api");
        assertThat(t.routeHttp(null, "/api/users", "DELETE", NO_HEADERS)).isNull();
    }

    @Test
    void hostsMatchExactlyOrBySuffixButNotTheBareSuffix() {
        RouteTable t = table();
        assertThat(t.routeHttp("shop.example.com", "/cart", "GET", NO_HEADERS).name()).isEqualTo("shop");
        assertThat(t.routeHttp("eu.shop.example.com", "/cart", "GET", NO_HEADERS).name()).isEqualTo("shop");
        assertThat(t.routeHttp("evilshop.example.com", "/cart", "GET", NO_HEADERS)).isNull();
        assertThat(t.routeHttp("example.com", "/cart", "GET", NO_HEADERS)).isNull();
        assertThat(t.routeHttp(null, "/cart", "GET", NO_HEADERS)).isNull();
    }

    @Test
    void pathsMatchExactPrefixAndWholeRegex() {
        RouteTable t = table();
        assertThat(t.routeHttp("x", "/healthz", "GET", NO_HEADERS).name()).isEqualTo("health");
        assertThat(t.routeHttp("x", "/healthz/deep", "GET", NO_HEADERS)).isNull();
        assertThat(t.routeHttp("x", "/img/logo.png", "GET", NO_HEADERS).name()).isEqualTo("static");
        assertThat(t.routeHttp("x", "/img/logo.png.html", "GET", NO_HEADERS)).isNull(); // regex must match the whole path
        assertThat(t.routeHttp("x", "/apix", "GET", NO_HEADERS)).isNull();
    }

    @Test
    void eachProtocolConsidersOnlyTheRoutesToItsClusters() {
        // a listener speaking both (protocol auto): the same catch-all rule, once per protocol
        RouteTable t = RouteTable.compile(List.of(route("all-rpc", RouteMatch.ANY, "any-rpc"),
                route("all-web", RouteMatch.ANY, "api")), clusters);
        assertThat(t.routeHttp("x", "/", "GET", NO_HEADERS).name()).isEqualTo("all-web");
        assertThat(t.routeBolt("com.example.Hello:1.0", "sayHello", NO_HEADERS).name()).isEqualTo("all-rpc");
        RouteTable httpOnly = RouteTable.compile(List.of(route("all-web", RouteMatch.ANY, "api")), clusters);
        assertThat(httpOnly.routeBolt("com.example.Hello:1.0", "sayHello", NO_HEADERS)).isNull();
    }

    @Test
    void boltRoutesIgnoreHttpOnlyRulesAndMatchServiceAndMethod() {
        RouteTable t = table();
        assertThat(t.routeBolt("com.example.Hello:1.0", "sayHello", NO_HEADERS).name()).isEqualTo("rpc");
        assertThat(t.routeBolt("com.example.Hello:1.0", "other", NO_HEADERS)).isNull();
        assertThat(t.routeBolt("org.other.Svc", "sayHello", NO_HEADERS)).isNull();
        // an HTTP route that has only a header condition does not catch Bolt traffic by accident
        assertThat(t.routeHttp("x", "/", "GET", NO_HEADERS)).isNull();
    }

    @Test
    void prefixRewriteReplacesOnlyTheMatchedPrefixAndKeepsTheQuery() {
        Route r = RouteTable.compile(List.of(new RouteConfig("v1", RouteMatch.pathPrefix("/v1/"), "api", "/internal/",
                Duration.ofSeconds(3))), clusters).routes().get(0);
        assertThat(r.rewrite("/v1/users?id=7")).isEqualTo("/internal/users?id=7");
        assertThat(r.timeoutNanos()).isEqualTo(Duration.ofSeconds(3).toNanos());
        Route strip = RouteTable.compile(List.of(new RouteConfig("strip", RouteMatch.pathPrefix("/svc"), "api", "",
                null)), clusters).routes().get(0);
        assertThat(strip.rewrite("/svc/a/b")).isEqualTo("/a/b");
        assertThat(strip.rewrite("/svc")).isEqualTo("/");
        // without a route timeout the cluster's response timeout applies
        assertThat(strip.timeoutNanos()).isEqualTo(ClusterConfig.DEFAULT_RESPONSE_TIMEOUT.toNanos());
    }
}
