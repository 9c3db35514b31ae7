package io.sluice.server.route;

import io.sluice.core.config.HeaderMatch;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.lb.ClusterBalancer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * A listener's routes, compiled against the running clusters. Immutable: a reload builds a new
 * table and swaps one reference. First match wins.
 */
public final class RouteTable {

    private final Route[] routes;
    /** The routes to HTTP clusters, and to Bolt clusters: a request considers those of its protocol only. */
    private final Route[] httpRoutes;
    private final Route[] boltRoutes;
    private final boolean usesHost;
    private final boolean usesPath;
    private final long minTimeoutNanos;

    private RouteTable(Route[] routes) {
        this.routes = routes;
        this.httpRoutes = Arrays.stream(routes)
                .filter(r -> r.cluster() == null || r.cluster().config().protocol() == Protocol.HTTP).toArray(Route[]::new);
        this.boltRoutes = Arrays.stream(routes)
                .filter(r -> r.cluster() != null && r.cluster().config().protocol() == Protocol.BOLT).toArray(Route[]::new);
        boolean host = false;
        boolean path = false;
        for (Route r : httpRoutes) {
            host |= !r.config().match().hosts().isEmpty();
            path |= r.config().match().path() != null;
        }
        this.usesHost = host;
        this.usesPath = path;
        long min = Long.MAX_VALUE;
        for (Route r : httpRoutes) {
            min = Math.min(min, r.timeoutNanos());
        }
        this.minTimeoutNanos = min;
    }

    /** The shortest response timeout of any HTTP route (Long.MAX_VALUE without them). */
    public long minTimeoutNanos() {
        return minTimeoutNanos;
    }

    /** False when no route looks at the Host header: callers may skip extracting it. */
    public boolean usesHost() {
        return usesHost;
    }

    /** False when no route looks at the path: callers may skip extracting it. */
    public boolean usesPath() {
        return usesPath;
    }

    /** Compiles {@code configs}; every referenced cluster must be in {@code clusters} (the config validated that). */
    public static RouteTable compile(List<RouteConfig> configs, Map<String, ClusterBalancer> clusters) {
        List<Route> out = new ArrayList<>(configs.size());
        for (int i = 0; i < configs.size(); i++) {
            RouteConfig rc = configs.get(i);
            ClusterBalancer c = rc.cluster() == null ? null : clusters.get(rc.cluster()); // null: answers by itself
            if (c == null && rc.cluster() != null) {
                throw new IllegalStateException("route " + i + " names unknown cluster " + rc.cluster());
            }
            out.add(new Route(rc.name() != null ? rc.name() : "route" + i, rc, c, RouteTraffic.compile(rc.traffic(), clusters)));
        }
        return new RouteTable(out.toArray(new Route[0]));
    }

    public List<Route> routes() {
        return List.of(routes);
    }

    /**
     * Routes an HTTP request.
     *
     * @param host    the Host header without port, lower case (may be null)
     * @param path    the path without query
     * @param method  upper-case method name
     * @param headers header lookup by lower-case name (returns null when absent)
     */
    public Route routeHttp(String host, String path, String method, Function<String, String> headers) {
        for (Route r : httpRoutes) {
            RouteMatch m = r.config().match();
            if (!m.matchesHost(host)) {
                continue;
            }
            if (m.path() != null && !m.path().matches(path)) {
                continue;
            }
            if (!m.methods().isEmpty() && !m.methods().contains(method)) {
                continue;
            }
            if (m.service() != null || m.rpcMethod() != null) {
                continue;
            }
            if (headersMatch(m.headers(), headers)) {
                return r;
            }
        }
        return null;
    }

    /**
     * Routes a Bolt request on its service and method.
     *
     * @param service the {@code service} header, else {@code sofa_head_target_service} (may be null)
     * @param method  {@code sofa_head_method_name} (may be null)
     * @param headers header-map lookup by exact key
     */
    public Route routeBolt(String service, String method, Function<String, String> headers) {
        for (Route r : boltRoutes) {
            RouteMatch m = r.config().match();
            if (m.path() != null || !m.hosts().isEmpty() || !m.methods().isEmpty()) {
                continue;
            }
            if (m.service() != null && !m.service().matches(service)) {
                continue;
            }
            if (m.rpcMethod() != null && !m.rpcMethod().matches(method)) {
                continue;
            }
            if (headersMatch(m.headers(), headers)) {
                return r;
            }
        }
        return null;
    }

    private static boolean headersMatch(List<HeaderMatch> conditions, Function<String, String> headers) {
        for (HeaderMatch hm : conditions) {
            String v = headers.apply(hm.name().toLowerCase(Locale.ROOT));
            if (v == null && !hm.name().equals(hm.name().toLowerCase(Locale.ROOT))) {
                v = headers.apply(hm.name());
            }
            if (v == null || (hm.value() != null && !hm.value().matches(v))) {
                return false;
            }
        }
        return true;
    }
}
