package io.sluice.core.config;

/**
 * Per-cluster concurrency limits (Envoy's circuit-breaker thresholds) and the retry budget. Over a
 * limit the gateway fails fast: HTTP 503 with {@code x-sluice-overloaded: true}, Bolt
 * SERVER_THREADPOOL_BUSY. Limits are counted per cluster across all listeners and event loops.
 *
 * @param maxConnections      open upstream connections of the cluster
 * @param maxPendingRequests  requests waiting for an upstream connection
 * @param maxRequests         active requests (incl. those waiting in retry back-off)
 * @param budgetPercent       concurrent retries may not exceed this share of active + pending requests
 *                            (percent, [0, 100]); 0 with {@code minRetryConcurrency} N is Envoy's static
 *                            {@code max_retries} N
 * @param minRetryConcurrency concurrent retries always allowed whatever the load
 * @param maxHostRequests     active requests per host (0 = no per-host limit); a host at its limit is
 *                            skipped by the picker (a few tries), then the request fails fast
 */
public record CircuitBreakerConfig(int maxConnections, int maxPendingRequests, int maxRequests,
                                   double budgetPercent, int minRetryConcurrency, int maxHostRequests) {

    public static final int DEFAULT_LIMIT = 1024;
    public static final double DEFAULT_BUDGET_PERCENT = 20.0;
    public static final int DEFAULT_MIN_RETRY_CONCURRENCY = 3;
    /**
     * Bolt clusters' default {@code max_requests}: a Bolt connection multiplexes up to
     * {@code max_in_flight_per_connection} (4096) requests, so Envoy's 1024 would shed a single busy client.
     */
    public static final int DEFAULT_BOLT_MAX_REQUESTS = 65_536;

    public CircuitBreakerConfig {
        Checks.range("max_connections", maxConnections, 1, Integer.MAX_VALUE);
        Checks.range("max_pending_requests", maxPendingRequests, 0, Integer.MAX_VALUE);
        Checks.range("max_requests", maxRequests, 1, Integer.MAX_VALUE);
        if (!(budgetPercent >= 0 && budgetPercent <= 100)) {
            throw new ConfigException("retry_budget.budget_percent", budgetPercent, "a percentage in [0, 100]");
        }
        Checks.range("retry_budget.min_retry_concurrency", minRetryConcurrency, 0, Integer.MAX_VALUE);
        Checks.range("max_host_requests", maxHostRequests, 0, Integer.MAX_VALUE);
    }

    /** Envoy's defaults: 1024 connections / pending / requests, retry budget 20 % with at least 3, no per-host limit. */
    public static CircuitBreakerConfig defaults() {
        return builder().build();
    }

    /** The defaults for a cluster speaking {@code p}: Envoy's, but {@value #DEFAULT_BOLT_MAX_REQUESTS} requests for Bolt. */
    public static CircuitBreakerConfig defaults(Protocol p) {
        return p == Protocol.BOLT ? builder().maxRequests(DEFAULT_BOLT_MAX_REQUESTS).build() : defaults();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxConnections = maxConnections;
        b.maxPendingRequests = maxPendingRequests;
        b.maxRequests = maxRequests;
        b.budgetPercent = budgetPercent;
        b.minRetryConcurrency = minRetryConcurrency;
        b.maxHostRequests = maxHostRequests;
        return b;
    }

    /** Builds a {@link CircuitBreakerConfig}; validation happens in {@link #build()}. */
    public static final class Builder {
        private int maxConnections = DEFAULT_LIMIT;
        private int maxPendingRequests = DEFAULT_LIMIT;
        private int maxRequests = DEFAULT_LIMIT;
        private double budgetPercent = DEFAULT_BUDGET_PERCENT;
        private int minRetryConcurrency = DEFAULT_MIN_RETRY_CONCURRENCY;
        private int maxHostRequests;

        private Builder() {
        }

        public Builder maxConnections(int v) {
            this.maxConnections = v;
            return this;
        }

        public Builder maxPendingRequests(int v) {
            this.maxPendingRequests = v;
            return this;
        }

        public Builder maxRequests(int v) {
            this.maxRequests = v;
            return this;
        }

        public Builder budgetPercent(double v) {
            this.budgetPercent = v;
            return this;
        }

        public Builder minRetryConcurrency(int v) {
            this.minRetryConcurrency = v;
            return this;
        }

        public Builder maxHostRequests(int v) {
            this.maxHostRequests = v;
            return this;
        }

        public CircuitBreakerConfig build() {
            return new CircuitBreakerConfig(maxConnections, maxPendingRequests, maxRequests, budgetPercent,
                    minRetryConcurrency, maxHostRequests);
        }
    }
}
