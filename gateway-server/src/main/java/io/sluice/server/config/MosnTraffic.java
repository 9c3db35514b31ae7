package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.HeaderRules;
import io.sluice.core.config.RouteRules;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import static io.sluice.server.config.ConfigLoader.build;

/**
 * The traffic keys of a MOSN router ({@code routers[]} entry: {@code direct_response},
 * {@code redirect}, header lists) and of its route action ({@code upgrade_configs}, header lists,
 * {@code host_rewrite}, {@code auto_host_rewrite}) as a {@link RouteRules}. Header lists are
 * {@code [{"header": {"key": k, "value": v}, "append": bool}]}: {@code append} false sets (replacing
 * the client's copies), true or absent adds. Values use the gateway's %VARIABLES%; a key or value it
 * cannot map fails naming its path.
 */
final class MosnTraffic {

    private MosnTraffic() {
    }

    /** The policy, or null when neither object sets a traffic key. Call before either object's finish(). */
    static RouteRules read(JsonObject router, JsonObject action) {
        boolean any = false;
        for (String k : new String[] {"request_headers_to_add", "response_headers_to_add", "request_headers_to_remove",
                "response_headers_to_remove", "direct_response", "redirect"}) {
            any |= router.has(k);
        }
        if (action != null) {
            for (String k : new String[] {"request_headers_to_add", "response_headers_to_add", "request_headers_to_remove",
                    "response_headers_to_remove", "upgrade_configs", "host_rewrite", "auto_host_rewrite"}) {
                any |= action.has(k);
            }
        }
        if (!any) {
            return null;
        }
        HeaderRules request = rules(action, router, "request_headers_to_add", "request_headers_to_remove");
        HeaderRules response = rules(action, router, "response_headers_to_add", "response_headers_to_remove");
        List<String> upgrades = action == null ? RouteRules.DEFAULT_UPGRADES : upgrades(action);
        String host = action == null ? null : action.string("host_rewrite", null);
        boolean autoHost = action != null && action.bool("auto_host_rewrite", false);
        RouteRules.DirectResponse direct = direct(router.object("direct_response"));
        RouteRules.Redirect redirect = redirect(router.object("redirect"));
        return build(router.path(), () -> RouteRules.builder().upgrades(upgrades).requestHeaders(request)
                .responseHeaders(response).hostRewrite(host == null || host.isEmpty() ? null : host)
                .hostRewriteToUpstream(autoHost).directResponse(direct).redirect(redirect).build());
    }

    private static HeaderRules rules(JsonObject action, JsonObject router, String addKey, String removeKey) {
        List<HeaderRules.Header> add = new ArrayList<>();
        List<HeaderRules.Header> set = new ArrayList<>();
        List<String> remove = new ArrayList<>();
        for (JsonObject o : new JsonObject[] {action, router}) {
            if (o == null) {
                continue;
            }
            o.array(addKey, (n, p) -> {
                JsonObject opt = JsonObject.of(n, p);
                JsonObject h = opt.object("header");
                if (h == null) {
                    throw new ConfigException(opt.at("header"), null, "{\"key\": name, \"value\": value}");
                }
                String key = h.requiredString("key");
                String value = h.string("value", "");
                h.finish();
                boolean append = opt.bool("append", true);
                opt.finish();
                HeaderRules.Header header = build(p, () -> new HeaderRules.Header(key, value));
                (append ? add : set).add(header);
                return null;
            });
            remove.addAll(o.strings(removeKey));
        }
        if (add.isEmpty() && set.isEmpty() && remove.isEmpty()) {
            return null;
        }
        String at = (action != null && (action.has(addKey) || action.has(removeKey)) ? action : router).path();
        return build(at, () -> new HeaderRules(add, set, remove));
    }

    private static List<String> upgrades(JsonObject action) {
        Set<String> out = new LinkedHashSet<>(RouteRules.DEFAULT_UPGRADES);
        action.array("upgrade_configs", (n, p) -> {
            JsonObject u = JsonObject.of(n, p);
            String type = u.requiredString("upgrade_type").toLowerCase(Locale.ROOT);
            boolean enabled = u.bool("enabled", true);
            u.finish();
            if (type.equals("connect")) {
                throw new ConfigException(u.at("upgrade_type"), type, "an Upgrade protocol such as \"websocket\" (CONNECT is not supported)");
            }
            if (enabled) {
                out.add(type);
            } else {
                out.remove(type);
            }
            return null;
        });
        return List.copyOf(out);
    }

    private static RouteRules.DirectResponse direct(JsonObject o) {
        if (o == null) {
            return null;
        }
        int status = o.integer("status", -1);
        JsonNode body = o.raw("body");
        String text = body == null ? null : body.isTextual() ? body.asText() : body.path("inline_string").asText(null);
        if (body != null && text == null) {
            throw new ConfigException(o.at("body"), JsonObject.describe(body), "a string, or {\"inline_string\": ..}");
        }
        o.finish();
        return build(o.path(), () -> new RouteRules.DirectResponse(status, text, null));
    }

    private static RouteRules.Redirect redirect(JsonObject o) {
        if (o == null) {
            return null;
        }
        String scheme = o.string("scheme_redirect", null);
        String host = o.string("host_redirect", null);
        int port = o.integer("port_redirect", 0);
        String path = o.string("path_redirect", null);
        String prefix = o.string("prefix_rewrite", null);
        boolean https = o.bool("https_redirect", false);
        int code = o.integer("response_code", 301);
        boolean strip = o.bool("strip_query", false);
        o.finish();
        return build(o.path(), () -> new RouteRules.Redirect(scheme == null || scheme.isEmpty() ? null
                : scheme.toLowerCase(Locale.ROOT), host == null || host.isEmpty() ? null : host, port,
                path == null || path.isEmpty() ? null : path, prefix, https, code, strip));
    }
}
