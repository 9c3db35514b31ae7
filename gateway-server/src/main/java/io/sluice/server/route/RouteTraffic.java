package io.sluice.server.route;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.HashPolicy;
import io.sluice.core.config.TrafficPolicy;
import io.sluice.core.config.WeightedCluster;
import io.sluice.core.config.WeightedClusters;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.Hashing;
import io.sluice.lb.WeightedSchedule;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A route's compiled traffic rules ({@link TrafficPolicy}): the hash key of a request, the cluster it
 * goes to when the route splits traffic, and the mirrors. Immutable apart from the schedule's and
 * mirrors' counters; a reload compiles a new one (requests in flight keep the cluster they got).
 * Routes without rules have none, and the proxy handlers skip all of this on a null check.
 */
public final class RouteTraffic {

    private final HashPolicy[] hash;
    private final ClusterBalancer[] sides;
    private final WeightedSchedule schedule;
    private final boolean sticky;
    private final MirrorTarget[] mirrors;

    private RouteTraffic(HashPolicy[] hash, ClusterBalancer[] sides, WeightedSchedule schedule, boolean sticky,
                         MirrorTarget[] mirrors) {
        this.hash = hash;
        this.sides = sides;
        this.schedule = schedule;
        this.sticky = sticky;
        this.mirrors = mirrors;
    }

    /** Null when {@code t} is null. */
    static RouteTraffic compile(TrafficPolicy t, Map<String, ClusterBalancer> clusters) {
        if (t == null) {
            return null;
        }
        ClusterBalancer[] sides = null;
        WeightedSchedule schedule = null;
        boolean sticky = false;
        WeightedClusters wc = t.weightedClusters();
        if (wc != null) {
            List<WeightedCluster> cs = wc.clusters();
            sides = new ClusterBalancer[cs.size()];
            int[] weights = new int[cs.size()];
            for (int i = 0; i < sides.length; i++) {
                sides[i] = required(clusters, cs.get(i).name());
                weights[i] = cs.get(i).weight();
            }
            schedule = WeightedSchedule.of(weights);
            sticky = wc.sticky();
        }
        MirrorTarget[] mirrors = new MirrorTarget[t.mirrors().size()];
        for (int i = 0; i < mirrors.length; i++) {
            mirrors[i] = new MirrorTarget(t.mirrors().get(i), required(clusters, t.mirrors().get(i).cluster()));
        }
        return new RouteTraffic(t.hashPolicy().toArray(new HashPolicy[0]), sides, schedule, sticky,
                mirrors.length == 0 ? null : mirrors);
    }

    private static ClusterBalancer required(Map<String, ClusterBalancer> clusters, String name) {
        ClusterBalancer c = clusters.get(name);
        if (c == null) {
            throw new IllegalStateException("route names unknown cluster " + name);
        }
        return c;
    }

    /**
     * The request's hash key from the first hash policy that yields a value, or {@link Hashing#NO_KEY}.
     *
     * @param headers header lookup (HTTP: any case; Bolt: exact key)
     * @param service Bolt: the request's service (null for HTTP)
     * @param client  the client's IP address, asked only when a policy needs it
     */
    public long key(Function<String, String> headers, String service, Supplier<String> client) {
        for (HashPolicy p : hash) {
            String v = switch (p.kind()) {
                case HEADER -> headers.apply(p.name());
                case COOKIE -> cookie(headers.apply("cookie"), p.name());
                case CLIENT_ADDRESS -> client.get();
                case SERVICE -> service;
            };
            if (v != null) {
                return Hashing.hash(v);
            }
        }
        return Hashing.NO_KEY;
    }

    /** The value of cookie {@code name} in a {@code Cookie} header ({@code a=1; b=2}), or null. */
    static String cookie(String header, String name) {
        if (header == null) {
            return null;
        }
        int n = header.length();
        int i = 0;
        while (i < n) {
            while (i < n && (header.charAt(i) == ' ' || header.charAt(i) == ';')) {
                i++;
            }
            int eq = header.indexOf('=', i);
            int end = header.indexOf(';', i);
            if (end < 0) {
                end = n;
            }
            if (eq > 0 && eq < end && eq - i == name.length() && header.regionMatches(i, name, 0, name.length())) {
                String v = header.substring(eq + 1, end).trim();
                if (v.length() >= 2 && v.charAt(0) == '"' && v.charAt(v.length() - 1) == '"') {
                    v = v.substring(1, v.length() - 1);
                }
                return v;
            }
            i = end + 1;
        }
        return null;
    }

    /** The cluster of a request with hash key {@code key}: a side of the split, or {@code primary} without one. */
    public ClusterBalancer cluster(ClusterBalancer primary, long key) {
        if (sides == null) {
            return primary;
        }
        int i = sticky && key != Hashing.NO_KEY ? schedule.forHash(key) : schedule.next();
        return sides[i];
    }

    /** Picks a host of {@code c} for a request with hash key {@code key}. */
    public static Host pick(ClusterBalancer c, long key) {
        return key == Hashing.NO_KEY ? c.pick() : c.pick(key);
    }

    /** The clusters of the split, or null when the route does not split. */
    public ClusterBalancer[] sides() {
        return sides;
    }

    /** The route's mirrors, or null. */
    public MirrorTarget[] mirrors() {
        return mirrors;
    }
}
