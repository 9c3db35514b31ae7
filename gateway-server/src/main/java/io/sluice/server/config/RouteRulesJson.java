package io.sluice.server.config;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.HeaderRules;
import io.sluice.core.config.RequestTracing;
import io.sluice.core.config.RouteRules;

import java.time.Duration;
import java.util.List;

import static io.sluice.server.config.ConfigLoader.build;

/**
 * Reads a route's traffic keys (native format): {@code upgrades}, {@code tunnel_idle_timeout},
 * {@code request_headers}, {@code response_headers}, {@code host_rewrite},
 * {@code host_rewrite_to_upstream}, {@code regex_rewrite}, {@code redirect}, {@code direct_response}.
 * Bad values fail with their JSON path.
 */
final class RouteRulesJson {

    static final String[] KEYS = {"upgrades", "tunnel_idle_timeout", "request_headers", "response_headers",
            "host_rewrite", "host_rewrite_to_upstream", "regex_rewrite", "redirect", "direct_response"};

    private RouteRulesJson() {
    }

    /** The route's policy, or null when it sets none of the keys. Call before {@code route.finish()}. */
    static RouteRules read(JsonObject route) {
        boolean any = false;
        for (String k : KEYS) {
            any |= route.has(k);
        }
        if (!any) {
            return null;
        }
        List<String> upgrades = route.has("upgrades") ? route.strings("upgrades") : RouteRules.DEFAULT_UPGRADES;
        Duration idle = route.duration("tunnel_idle_timeout", RouteRules.DEFAULT_TUNNEL_IDLE_TIMEOUT);
        HeaderRules req = headerRules(route.object("request_headers"));
        HeaderRules resp = headerRules(route.object("response_headers"));
        String host = route.string("host_rewrite", null);
        boolean toUpstream = route.bool("host_rewrite_to_upstream", false);
        RouteRules.RegexRewrite regex = regexRewrite(route.object("regex_rewrite"));
        RouteRules.Redirect redirect = redirect(route.object("redirect"));
        RouteRules.DirectResponse direct = directResponse(route.object("direct_response"));
        return build(route.path(), () -> new RouteRules(upgrades, idle, req, resp, host, toUpstream, regex, redirect, direct));
    }

    /** Writes {@code t}'s keys into a route object (the running config, read back by {@link #read}); nothing for null. */
    static void write(ObjectNode o, RouteRules t) {
        if (t == null) {
            return;
        }
        t.upgrades().forEach(o.putArray("upgrades")::add);
        o.put("tunnel_idle_timeout", DurationFormat.format(t.tunnelIdleTimeout()));
        writeRules(o, "request_headers", t.requestHeaders());
        writeRules(o, "response_headers", t.responseHeaders());
        if (t.hostRewrite() != null) {
            o.put("host_rewrite", t.hostRewrite());
        }
        if (t.hostRewriteToUpstream()) {
            o.put("host_rewrite_to_upstream", true);
        }
        if (t.regexRewrite() != null) {
            o.putObject("regex_rewrite").put("pattern", t.regexRewrite().pattern())
                    .put("substitution", t.regexRewrite().substitution());
        }
        RouteRules.Redirect r = t.redirect();
        if (r != null) {
            ObjectNode rn = o.putObject("redirect").put("status", r.status()).put("https_redirect", r.httpsRedirect())
                    .put("strip_query", r.stripQuery()).put("port", r.port());
            if (r.scheme() != null) {
                rn.put("scheme", r.scheme());
            }
            if (r.host() != null) {
                rn.put("host", r.host());
            }
            if (r.path() != null) {
                rn.put("path", r.path());
            }
            if (r.prefixRewrite() != null) {
                rn.put("prefix_rewrite", r.prefixRewrite());
            }
        }
        RouteRules.DirectResponse d = t.directResponse();
        if (d != null) {
            ObjectNode dn = o.putObject("direct_response").put("status", d.status());
            if (d.body() != null) {
                dn.put("body", d.body());
            }
            if (d.contentType() != null) {
                dn.put("content_type", d.contentType());
            }
        }
    }

    static void writeRules(ObjectNode o, String key, HeaderRules rules) {
        if (rules == null) {
            return;
        }
        ObjectNode n = o.putObject(key);
        ArrayNode add = n.putArray("add");
        rules.add().forEach(h -> add.addObject().put("name", h.name()).put("value", h.value()));
        ArrayNode set = n.putArray("set");
        rules.set().forEach(h -> set.addObject().put("name", h.name()).put("value", h.value()));
        rules.remove().forEach(n.putArray("remove")::add);
    }

    /** A cluster's {@code request_headers} / {@code response_headers}, or null. */
    static ClusterConfig.ClusterHeaders clusterHeaders(JsonObject cluster) {
        HeaderRules req = headerRules(cluster.object("request_headers"));
        HeaderRules resp = headerRules(cluster.object("response_headers"));
        return req == null && resp == null ? null : new ClusterConfig.ClusterHeaders(req, resp);
    }

    /** {@code http.tracing}: {@code request_id}, {@code echo_request_id}, {@code traceparent} (all false by default). */
    static RequestTracing tracing(JsonObject o) {
        if (o == null) {
            return null;
        }
        boolean id = o.bool("request_id", false);
        boolean echo = o.bool("echo_request_id", false);
        boolean tp = o.bool("traceparent", false);
        o.finish();
        return build(o.path(), () -> new RequestTracing(id, echo, tp));
    }

    static HeaderRules headerRules(JsonObject o) {
        if (o == null) {
            return null;
        }
        List<HeaderRules.Header> add = o.array("add", (n, p) -> header(JsonObject.of(n, p)));
        List<HeaderRules.Header> set = o.array("set", (n, p) -> header(JsonObject.of(n, p)));
        List<String> remove = o.strings("remove");
        o.finish();
        return build(o.path(), () -> new HeaderRules(add, set, remove));
    }

    private static HeaderRules.Header header(JsonObject o) {
        String name = o.requiredString("name");
        String value = o.requiredString("value");
        o.finish();
        return build(o.path(), () -> new HeaderRules.Header(name, value));
    }

    private static RouteRules.RegexRewrite regexRewrite(JsonObject o) {
        if (o == null) {
            return null;
        }
        String pattern = o.requiredString("pattern");
        String substitution = o.requiredString("substitution");
        o.finish();
        return build(o.path(), () -> new RouteRules.RegexRewrite(pattern, substitution));
    }

    private static RouteRules.Redirect redirect(JsonObject o) {
        if (o == null) {
            return null;
        }
        String scheme = o.string("scheme", null);
        String host = o.string("host", null);
        int port = o.integer("port", 0);
        String path = o.string("path", null);
        String prefix = o.string("prefix_rewrite", null);
        boolean https = o.bool("https_redirect", false);
        int status = o.integer("status", 301);
        boolean strip = o.bool("strip_query", false);
        o.finish();
        return build(o.path(), () -> new RouteRules.Redirect(scheme, host, port, path, prefix, https, status, strip));
    }

    private static RouteRules.DirectResponse directResponse(JsonObject o) {
        if (o == null) {
            return null;
        }
        int status = o.integer("status", -1);
        String body = o.string("body", null);
        String type = o.string("content_type", null);
        o.finish();
        return build(o.path(), () -> new RouteRules.DirectResponse(status, body, type));
    }
}
