package io.sluice.core.config;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What a route does to HTTP traffic beyond choosing a cluster: protocol upgrades (WebSocket and
 * others), header rules, Host and path rewrites, and answers the gateway gives itself (redirect,
 * direct response). A route without a policy behaves as {@link #DEFAULT}: WebSocket upgrades allowed,
 * nothing else.
 *
 * @param upgrades          upgrade protocols ({@code Upgrade} tokens, lower case) tunnelled on this
 *                          route; anything else has its {@code Upgrade} removed and goes up as a
 *                          plain request. Default {@code ["websocket"]}; empty: none.
 * @param tunnelIdleTimeout an upgraded connection with no byte either way for this long is closed (default 1h)
 * @param requestHeaders    rules applied to the request sent upstream (null: none)
 * @param responseHeaders   rules applied to the response sent to the client (null: none)
 * @param hostRewrite       literal Host sent upstream (null: unchanged)
 * @param hostRewriteToUpstream send the picked upstream's address as Host
 * @param regexRewrite      path rewrite by regular expression (null: none)
 * @param redirect          answer with a redirect instead of proxying (null: none)
 * @param directResponse    answer with a fixed response instead of proxying (null: none)
 */
public record RouteRules(List<String> upgrades, Duration tunnelIdleTimeout, HeaderRules requestHeaders,
                            HeaderRules responseHeaders, String hostRewrite, boolean hostRewriteToUpstream,
                            RegexRewrite regexRewrite, Redirect redirect, DirectResponse directResponse) {

    public static final Duration DEFAULT_TUNNEL_IDLE_TIMEOUT = Duration.ofHours(1);
    public static final List<String> DEFAULT_UPGRADES = List.of("websocket");
    public static final RouteRules DEFAULT = builder().build();

    public RouteRules {
        upgrades = upgrades == null ? DEFAULT_UPGRADES : upgrades.stream().map(u -> {
            if (u == null || !HeaderRules.isToken(u)) {
                throw new ConfigException("upgrades", u, "an upgrade protocol token such as \"websocket\"");
            }
            return u.toLowerCase(Locale.ROOT);
        }).toList();
        tunnelIdleTimeout = tunnelIdleTimeout == null ? DEFAULT_TUNNEL_IDLE_TIMEOUT
                : Checks.positive("tunnel_idle_timeout", tunnelIdleTimeout);
        if (hostRewrite != null && (hostRewrite.isBlank() || !HeaderRules.isValue(hostRewrite))) {
            throw new ConfigException("host_rewrite", hostRewrite, "a host name, optionally with :port");
        }
        if (hostRewrite != null && hostRewriteToUpstream) {
            throw new ConfigException("host_rewrite_to_upstream", true, "false when host_rewrite is set (one or the other)");
        }
        if (redirect != null && directResponse != null) {
            throw new ConfigException("direct_response", "set", "no direct_response on a route with a redirect (one or the other)");
        }
    }

    /** Whether the route answers by itself (no cluster needed). */
    public boolean answersLocally() {
        return redirect != null || directResponse != null;
    }

    /** Whether {@code type} (lower case) may be tunnelled. */
    public boolean allowsUpgrade(String type) {
        return upgrades.contains(type);
    }

    /**
     * Path rewrite: the first match of {@code pattern} in the path is replaced by
     * {@code substitution} ({@code \1}-style groups written as {@code $1}).
     */
    public record RegexRewrite(String pattern, String substitution) {
        public RegexRewrite {
            Checks.notBlank("pattern", pattern);
            Checks.regex("pattern", pattern);
            Checks.notNull("substitution", substitution);
        }

        public Pattern compiled() {
            return Pattern.compile(pattern);
        }
    }

    /**
     * A redirect answer. Unset parts keep the request's: {@code scheme} (or {@code https} with
     * {@code httpsRedirect}), {@code host}, {@code port} (0: none/unchanged), {@code path} (whole
     * path) or {@code prefixRewrite} (the matched prefix), the query unless {@code stripQuery}.
     *
     * @param status 301, 302, 303, 307 or 308 (default 301)
     */
    public record Redirect(String scheme, String host, int port, String path, String prefixRewrite,
                           boolean httpsRedirect, int status, boolean stripQuery) {
        public Redirect {
            if (scheme != null && !scheme.equals("http") && !scheme.equals("https")) {
                throw new ConfigException("scheme", scheme, "\"http\" or \"https\"");
            }
            if (scheme != null && httpsRedirect) {
                throw new ConfigException("https_redirect", true, "false when scheme is set (one or the other)");
            }
            if (host != null && (host.isBlank() || !HeaderRules.isValue(host) || host.contains("/"))) {
                throw new ConfigException("host", host, "a host name");
            }
            Checks.range("port", port, 0, 65535);
            if (path != null && (!path.startsWith("/") || !HeaderRules.isValue(path))) {
                throw new ConfigException("path", path, "a path starting with /");
            }
            if (path != null && prefixRewrite != null) {
                throw new ConfigException("prefix_rewrite", prefixRewrite, "no prefix_rewrite when path is set (one or the other)");
            }
            if (prefixRewrite != null && !HeaderRules.isValue(prefixRewrite)) {
                throw new ConfigException("prefix_rewrite", prefixRewrite, "a path prefix");
            }
            status = status == 0 ? 301 : status;
            if (status != 301 && status != 302 && status != 303 && status != 307 && status != 308) {
                throw new ConfigException("status", status, "one of 301, 302, 303, 307, 308");
            }
        }
    }

    /**
     * A fixed answer.
     *
     * @param status      100..599 (1xx other than... not allowed: 200..599)
     * @param body        the body (null: empty); at most 64 KiB
     * @param contentType its Content-Type (default {@code text/plain; charset=utf-8} when there is a body)
     */
    public record DirectResponse(int status, String body, String contentType) {
        public DirectResponse {
            Checks.range("status", status, 200, 599);
            if (body != null && body.length() > 65536) {
                throw new ConfigException("body", body.length() + " characters", "a body of at most 65536 characters");
            }
            if (contentType != null && !HeaderRules.isValue(contentType)) {
                throw new ConfigException("content_type", contentType, "a header value");
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.upgrades = upgrades;
        b.tunnelIdleTimeout = tunnelIdleTimeout;
        b.requestHeaders = requestHeaders;
        b.responseHeaders = responseHeaders;
        b.hostRewrite = hostRewrite;
        b.hostRewriteToUpstream = hostRewriteToUpstream;
        b.regexRewrite = regexRewrite;
        b.redirect = redirect;
        b.directResponse = directResponse;
        return b;
    }

    /** Builds a {@link RouteRules}; validation happens in {@link #build()}. */
    public static final class Builder {
        private List<String> upgrades = DEFAULT_UPGRADES;
        private Duration tunnelIdleTimeout = DEFAULT_TUNNEL_IDLE_TIMEOUT;
        private HeaderRules requestHeaders;
        private HeaderRules responseHeaders;
        private String hostRewrite;
        private boolean hostRewriteToUpstream;
        private RegexRewrite regexRewrite;
        private Redirect redirect;
        private DirectResponse directResponse;

        private Builder() {
        }

        public Builder upgrades(List<String> v) {
            upgrades = v;
            return this;
        }

        public Builder tunnelIdleTimeout(Duration v) {
            tunnelIdleTimeout = v;
            return this;
        }

        public Builder requestHeaders(HeaderRules v) {
            requestHeaders = v;
            return this;
        }

        public Builder responseHeaders(HeaderRules v) {
            responseHeaders = v;
            return this;
        }

        public Builder hostRewrite(String v) {
            hostRewrite = v;
            return this;
        }

        public Builder hostRewriteToUpstream(boolean v) {
            hostRewriteToUpstream = v;
            return this;
        }

        public Builder regexRewrite(RegexRewrite v) {
            regexRewrite = v;
            return this;
        }

        public Builder redirect(Redirect v) {
            redirect = v;
            return this;
        }

        public Builder directResponse(DirectResponse v) {
            directResponse = v;
            return this;
        }

        public RouteRules build() {
            return new RouteRules(upgrades, tunnelIdleTimeout, requestHeaders, responseHeaders, hostRewrite,
                    hostRewriteToUpstream, regexRewrite, redirect, directResponse);
        }
    }
}
