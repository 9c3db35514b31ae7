package io.sluice.core.config;

import java.util.Locale;

/** Load-balancing policy of a cluster. JSON names are the lower-case constants; MOSN's {@code LB_*} names map here. */
public enum LbPolicy {
    /** EDF weighted scheduler with slow start (default). */
    WEIGHTED_ROUND_ROBIN,
    /** Plain rotation, weights ignored. */
    ROUND_ROBIN,
    /** Uniform random (weighted when weights differ). */
    RANDOM,
    /** Power of two choices on active requests; weighted EDF with an active-request bias when weights differ. */
    LEAST_REQUEST,
    /** Consistent hashing on a ring of host points (ketama), keyed by the route's hash_policy. */
    RING_HASH,
    /** Maglev consistent hashing (a prime-sized lookup table), keyed by the route's hash_policy. */
    MAGLEV;

    /** True for the policies that choose a host from a request's hash key. */
    public boolean hashed() {
        return this == RING_HASH || this == MAGLEV;
    }

    /** The JSON spelling, e.g. {@code weighted_round_robin}. */
    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a native name or a MOSN {@code lb_type}; returns null if unknown. */
    public static LbPolicy parse(String s) {
        if (s == null) {
            return null;
        }
        String n = s.trim().toUpperCase(Locale.ROOT);
        if (n.startsWith("LB_")) {
            n = switch (n) {
                case "LB_ROUNDROBIN" -> "ROUND_ROBIN";
                case "LB_WEIGHTED_ROUNDROBIN" -> "WEIGHTED_ROUND_ROBIN";
                case "LB_RANDOM" -> "RANDOM";
                case "LB_LEAST_REQUEST" -> "LEAST_REQUEST";
                case "LB_MAGLEV" -> "MAGLEV";
                case "LB_RING_HASH", "LB_RINGHASH" -> "RING_HASH";
                default -> n;
            };
        }
        for (LbPolicy p : values()) {
            if (p.name().equals(n)) {
                return p;
            }
        }
        return null;
    }
}
