package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteRules;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The traffic keys of routes and {@code http.tracing}, native and MOSN: read, and every bad value named by its JSON path. */
class RouteRulesConfigTest {

    private static final String MIN = """
            {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "api" ROUTE}]}],
             "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000"]}]}""";

    private static GatewayConfig route(String keys) {
        return ConfigLoader.parse(MIN.replace(" ROUTE", ", " + keys), "t.json").config();
    }

    private static String error(String json) {
        try {
            ConfigLoader.parse(json, "t.json");
        } catch (ConfigException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + json);
    }

    private static String routeError(String keys) {
        return error(MIN.replace(" ROUTE", ", " + keys));
    }

    @Test
    void routeTrafficKeysAreRead() {
        RouteConfig r = route("""
                "upgrades": ["websocket", "H2C"], "tunnel_idle_timeout": "10m",
                "request_headers": {"add": [{"name": "x-a", "value": "%DOWNSTREAM_REMOTE_ADDRESS%"}],
                                    "set": [{"name": "x-b", "value": "b"}], "remove": ["x-c"]},
                "response_headers": {"remove": ["server"]}, "host_rewrite": "api.internal",
                "regex_rewrite": {"pattern": "^/v1/(.*)$", "substitution": "/$1"}""").listeners().get(0).routes().get(0);
        RouteRules t = r.rules();
        assertThat(t.upgrades()).containsExactly("websocket", "h2c");
        assertThat(t.tunnelIdleTimeout()).isEqualTo(Duration.ofMinutes(10));
        assertThat(t.requestHeaders().add().get(0).value()).isEqualTo("%DOWNSTREAM_REMOTE_ADDRESS%");
        assertThat(t.requestHeaders().set().get(0).name()).isEqualTo("x-b");
        assertThat(t.responseHeaders().remove()).containsExactly("server");
        assertThat(t.hostRewrite()).isEqualTo("api.internal");
        assertThat(t.regexRewrite().substitution()).isEqualTo("/$1");
        assertThat(route("\"upgrades\": []").listeners().get(0).routes().get(0).rules().upgrades()).isEmpty();
        assertThat(ConfigLoader.parse(MIN.replace(" ROUTE", ""), "t.json").config().listeners().get(0).routes().get(0).rules()).isNull();

        RouteConfig redirect = ConfigLoader.parse(MIN.replace("{\"cluster\": \"api\" ROUTE}",
                "{\"redirect\": {\"https_redirect\": true, \"status\": 308}}"), "t.json").config().listeners().get(0).routes().get(0);
        assertThat(redirect.cluster()).isNull();
        assertThat(redirect.rules().redirect().status()).isEqualTo(308);

        HttpOptions h = ConfigLoader.parse(MIN.replace(" ROUTE", "").replace("\"port\": 8080,",
                "\"port\": 8080, \"http\": {\"tracing\": {\"request_id\": true, \"echo_request_id\": true, \"traceparent\": true}},"),
                "t.json").config().listeners().get(0).http();
        assertThat(h.tracing().requestId()).isTrue();
        assertThat(h.tracing().traceparent()).isTrue();
    }

    @Test
    void theRunningConfigShowsTrafficKeysAndReadsBackTheSame() {
        String json = MIN.replace("{\"cluster\": \"api\" ROUTE}", """
                {"cluster": "api", "upgrades": ["websocket", "h2c"], "tunnel_idle_timeout": "10m",
                 "request_headers": {"add": [{"name": "x-a", "value": "%REQUEST_ID%"}], "set": [{"name": "x-b", "value": "b"}],
                                     "remove": ["x-c"]},
                 "response_headers": {"remove": ["server"]}, "host_rewrite_to_upstream": true,
                 "regex_rewrite": {"pattern": "^/v1/", "substitution": "/"}},
                {"redirect": {"host": "h", "path": "/p", "status": 307, "strip_query": true}},
                {"direct_response": {"status": 503, "body": "down", "content_type": "text/html"}}""")
                .replace("\"port\": 8080,", "\"port\": 8080, \"http\": {\"tracing\": {\"traceparent\": true}},")
                .replace("\"hosts\": [\"127.0.0.1:9000\"]", "\"hosts\": [\"127.0.0.1:9000\"], \"response_headers\": {\"add\": [{\"name\": \"x\", \"value\": \"y\"}]}");
        GatewayConfig c = ConfigLoader.parse(json, "t.json").config();
        GatewayConfig back = ConfigLoader.parse(ConfigJson.render(c), "t.json").config();
        assertThat(back.listeners().get(0).routes()).isEqualTo(c.listeners().get(0).routes());
        assertThat(back.listeners().get(0).http().tracing()).isEqualTo(c.listeners().get(0).http().tracing());
        assertThat(c.cluster("api").headers().response().add()).hasSize(1);
        assertThat(back.cluster("api")).isEqualTo(c.cluster("api"));
    }

    @Test
    void everyBadTrafficValueIsNamedByItsPath() {
        String at = "$.listeners[0].routes[0]";
        String[][] cases = {
                {"\"upgrades\": [\"web socket\"]", at + ".upgrades"},
                {"\"upgrades\": \"websocket\"", at + ".upgrades"},
                {"\"tunnel_idle_timeout\": \"0s\"", at + ".tunnel_idle_timeout"},
                {"\"request_headers\": {\"add\": [{\"name\": \"x-a\", \"value\": \"%NOPE%\"}]}", at + ".request_headers.add[0].value"},
                {"\"request_headers\": {\"add\": [{\"name\": \"x a\", \"value\": \"v\"}]}", at + ".request_headers.add[0].name"},
                {"\"request_headers\": {\"set\": [{\"name\": \"connection\", \"value\": \"v\"}]}", at + ".request_headers.set[0].name"},
                {"\"request_headers\": {\"remove\": [\"host\"]}", at + ".request_headers.remove[0]"},
                {"\"request_headers\": {\"add\": [{\"name\": \"x-a\", \"value\": \"a\\nb\"}]}", at + ".request_headers.add[0].value"},
                {"\"request_headers\": {\"append\": []}", at + ".request_headers.append"},
                {"\"response_headers\": {\"set\": [{\"name\": \"x-a\"}]}", at + ".response_headers.set[0].value"},
                {"\"host_rewrite\": \"bad host\\r\"", at + ".host_rewrite"},
                {"\"host_rewrite\": \"a\", \"host_rewrite_to_upstream\": true", at + ".host_rewrite_to_upstream"},
                {"\"regex_rewrite\": {\"pattern\": \"(\", \"substitution\": \"/\"}", at + ".regex_rewrite.pattern"},
                {"\"regex_rewrite\": {\"pattern\": \"a\"}", at + ".regex_rewrite.substitution"},
                {"\"redirect\": {\"status\": 200}", at + ".redirect.status"},
                {"\"redirect\": {\"scheme\": \"ftp\"}", at + ".redirect.scheme"},
                {"\"redirect\": {\"port\": 70000}", at + ".redirect.port"},
                {"\"redirect\": {\"path\": \"nope\"}", at + ".redirect.path"},
                {"\"redirect\": {\"hots\": \"a\"}", at + ".redirect.hots"},
                {"\"redirect\": {\"host\": \"a\"}", at + ".cluster"},
                {"\"direct_response\": {\"status\": 99}", at + ".direct_response.status"},
                {"\"direct_response\": {\"body\": \"x\"}", at + ".direct_response.status"},
                {"\"upgrade\": []", at + ".upgrade"},
        };
        for (String[] c : cases) {
            assertThat(routeError(c[0])).as(c[0]).startsWith(c[1] + ":");
        }
        assertThat(error(MIN.replace(" ROUTE", "").replace("\"hosts\": [\"127.0.0.1:9000\"]",
                "\"hosts\": [\"127.0.0.1:9000\"], \"request_headers\": {\"set\": [{\"name\": \"te\", \"value\": \"x\"}]}")))
                .startsWith("$.clusters[0].request_headers.set[0].name:");
        String tracing = MIN.replace(" ROUTE", "").replace("\"port\": 8080,", "\"port\": 8080, \"http\": {\"tracing\": TRACING},");
        assertThat(error(tracing.replace("TRACING", "{\"request_id\": 1}"))).startsWith("$.listeners[0].http.tracing.request_id:");
        assertThat(error(tracing.replace("TRACING", "{\"echo_request_id\": true}")))
                .startsWith("$.listeners[0].http.tracing.echo_request_id:");
        assertThat(error(tracing.replace("TRACING", "{\"trace\": true}"))).startsWith("$.listeners[0].http.tracing.trace:");
    }

    private static final String MOSN = """
            {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
               "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1",
                 "upstream_protocol": "Http1", "router_config_name": "r"}}]}]}],
              "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                 "routers": [ROUTERS]}]}]}],
             "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE", "hosts": [{"address": "127.0.0.1:8080"}]}]}}""";

    private static GatewayConfig mosn(String routers) {
        return ConfigLoader.parse(MOSN.replace("ROUTERS", routers), "m.json").config();
    }

    @Test
    void mosnTrafficKeysAreMapped() {
        List<RouteConfig> routes = mosn("""
                {"match": {"prefix": "/ws"}, "route": {"cluster_name": "c", "upgrade_configs": [{"upgrade_type": "websocket",
                   "enabled": false}, {"upgrade_type": "h2c"}], "auto_host_rewrite": true,
                   "request_headers_to_add": [{"header": {"key": "x-set", "value": "s"}, "append": false},
                                              {"header": {"key": "x-add", "value": "%REQUEST_ID%"}}],
                   "request_headers_to_remove": ["x-internal"]},
                 "response_headers_to_add": [{"header": {"key": "x-r", "value": "r"}}], "response_headers_to_remove": ["server"]},
                {"match": {"prefix": "/old"}, "redirect": {"path_redirect": "/new", "response_code": 302, "host_redirect": "h"}},
                {"match": {"prefix": "/gone"}, "direct_response": {"status": 410, "body": "gone"}}""")
                .listeners().get(0).routes();
        RouteRules t = routes.get(0).rules();
        assertThat(t.upgrades()).containsExactly("h2c");
        assertThat(t.hostRewriteToUpstream()).isTrue();
        assertThat(t.requestHeaders().set()).extracting(h -> h.name()).containsExactly("x-set");
        assertThat(t.requestHeaders().add()).extracting(h -> h.value()).containsExactly("%REQUEST_ID%");
        assertThat(t.requestHeaders().remove()).containsExactly("x-internal");
        assertThat(t.responseHeaders().add()).extracting(h -> h.name()).containsExactly("x-r");
        assertThat(t.responseHeaders().remove()).containsExactly("server");
        assertThat(routes.get(1).cluster()).isNull();
        assertThat(routes.get(1).rules().redirect().status()).isEqualTo(302);
        assertThat(routes.get(1).rules().redirect().path()).isEqualTo("/new");
        assertThat(routes.get(2).rules().directResponse().body()).isEqualTo("gone");
    }

    @Test
    void mosnTrafficValuesItCannotMapAreErrorsNamingThePath() {
        String r = "$.servers[0].routers[0].virtual_hosts[0].routers[0]";
        String[][] cases = {
                {"{\"match\": {\"prefix\": \"/\"}, \"route\": {\"cluster_name\": \"c\", \"upgrade_configs\": [{\"upgrade_type\": \"CONNECT\"}]}}",
                        r + ".route.upgrade_configs[0].upgrade_type"},
                {"{\"match\": {\"prefix\": \"/\"}, \"route\": {\"cluster_name\": \"c\", \"upgrade_configs\": [{\"upgrade_type\": \"websocket\", \"connect_config\": {}}]}}",
                        r + ".route.upgrade_configs[0].connect_config"},
                {"{\"match\": {\"prefix\": \"/\"}, \"route\": {\"cluster_name\": \"c\", \"request_headers_to_add\": [{\"header\": {\"key\": \"x\", \"value\": \"%UPSTREAM_LOCAL_ADDRESS%\"}}]}}",
                        r + ".route.request_headers_to_add[0]"},
                {"{\"match\": {\"prefix\": \"/\"}, \"route\": {\"cluster_name\": \"c\", \"request_headers_to_add\": [{\"header\": {\"key\": \"x\"}, \"keep_empty_value\": true}]}}",
                        r + ".route.request_headers_to_add[0].keep_empty_value"},
                {"{\"match\": {\"prefix\": \"/\"}, \"redirect\": {\"response_code\": 200}}", r + ".redirect.status"},
                {"{\"match\": {\"prefix\": \"/\"}, \"redirect\": {\"regex_rewrite\": {}}}", r + ".redirect.regex_rewrite"},
                {"{\"match\": {\"prefix\": \"/\"}, \"direct_response\": {\"status\": 200, \"body\": {\"filename\": \"/etc/x\"}}}",
                        r + ".direct_response.body"},
                {"{\"match\": {\"prefix\": \"/\"}, \"route\": {\"cluster_name\": \"c\"}, \"direct_response\": {\"status\": 200}}",
                        r + ".cluster"},
        };
        for (String[] c : cases) {
            assertThat(error(MOSN.replace("ROUTERS", c[0]))).as(c[0]).startsWith(c[1]);
        }
    }

    @Test
    void aRouteThatAnswersByItselfTakesNoClusterSplitMirrorsOrRetries() {
        String local = "{\"direct_response\": {\"status\": 200, \"body\": \"ok\"}";
        String base = MIN.replace("\"hosts\": [\"127.0.0.1:9000\"]}", "\"hosts\": [\"127.0.0.1:9000\"]}, {\"name\": \"b\", \"hosts\": [\"127.0.0.1:9001\"]}");
        assertThat(error(base.replace("{\"cluster\": \"api\" ROUTE}", local + ", \"retry_policy\": {\"num_retries\": 1}}")))
                .contains("$.listeners[0].routes[0]").contains("retry_policy");
        assertThat(error(base.replace("{\"cluster\": \"api\" ROUTE}", local + ", \"mirrors\": [{\"cluster\": \"b\"}]}")))
                .contains("$.listeners[0].routes[0]").contains("weighted_clusters");
        assertThat(error(base.replace("{\"cluster\": \"api\" ROUTE}", local
                + ", \"weighted_clusters\": {\"clusters\": [{\"name\": \"api\", \"weight\": 1}, {\"name\": \"b\", \"weight\": 1}]}}")))
                .contains("$.listeners[0].routes[0]");
        // a local route next to a weighted one: both load, clustersUsed() of the local one is empty
        GatewayConfig ok = ConfigLoader.parse(base.replace("{\"cluster\": \"api\" ROUTE}", local + "}, {\"weighted_clusters\":"
                + " {\"clusters\": [{\"name\": \"api\", \"weight\": 1}, {\"name\": \"b\", \"weight\": 1}]},"
                + " \"request_headers\": {\"set\": [{\"name\": \"x-a\", \"value\": \"a\"}]}}"), "t.json").config();
        assertThat(ok.listeners().get(0).routes().get(0).clustersUsed()).isEmpty();
        assertThat(ok.listeners().get(0).routes().get(1).clustersUsed()).containsExactly("api", "b");
        assertThat(ok.listeners().get(0).routes().get(1).rules().requestHeaders().set()).hasSize(1);
    }
}
