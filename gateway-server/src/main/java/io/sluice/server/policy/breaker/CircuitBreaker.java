package io.sluice.server.policy.breaker;

import io.sluice.core.config.CircuitBreakerConfig;

/**
 * The circuit breakers of one cluster (shared by every listener and event loop that sends to it):
 * open upstream connections, requests waiting for a connection, active requests, and concurrent
 * retries under the retry budget (a share of active + pending requests, never below the minimum).
 * A check is one atomic increment and compare; a slot taken must be released exactly once. The
 * object outlives config reloads of its cluster ({@link #configure} changes the limits in place), so
 * requests in flight keep their slots.
 */
public final class CircuitBreaker {

    private final Limit connections;
    private final Limit pending;
    private final Limit requests;
    private final Limit retries;
    private volatile CircuitBreakerConfig config;

    public CircuitBreaker(String cluster, CircuitBreakerConfig config) {
        this.connections = new Limit(cluster, "connections", config.maxConnections());
        this.pending = new Limit(cluster, "pending requests", config.maxPendingRequests());
        this.requests = new Limit(cluster, "requests", config.maxRequests());
        this.retries = new Limit(cluster, "retries", config.minRetryConcurrency());
        this.config = config;
    }

    /** Applies reloaded limits in place (slots held stay held). */
    public void configure(CircuitBreakerConfig c) {
        if (c.equals(config)) {
            return;
        }
        connections.max(c.maxConnections());
        pending.max(c.maxPendingRequests());
        requests.max(c.maxRequests());
        config = c;
        retries.max(retryLimit());
    }

    public CircuitBreakerConfig config() {
        return config;
    }

    public Limit connections() {
        return connections;
    }

    public Limit pending() {
        return pending;
    }

    public Limit requests() {
        return requests;
    }

    public Limit retries() {
        return retries;
    }

    /** Takes an active-request slot; false: over {@code max_requests}, fail fast. */
    public boolean tryRequest() {
        return requests.tryAcquire();
    }

    public void requestDone() {
        requests.release();
    }

    /**
     * Takes a retry slot under the budget: concurrent retries may not exceed
     * {@code max(min_retry_concurrency, budget_percent × active requests not retrying)}; a retry
     * holds its slot from the moment it is scheduled (back-off included) until its attempt ends.
     */
    public boolean tryRetry() {
        int limit = retryLimit();
        if (retries.max() != limit) {
            retries.max(limit); // for the gauges and the breaker's close hysteresis
        }
        return retries.tryAcquire(limit);
    }

    public void retryDone() {
        retries.release();
    }

    /** The concurrent retries the budget allows now. */
    public int retryLimit() {
        CircuitBreakerConfig c = config;
        // the requests in flight that are not retrying themselves (those waiting for a connection
        // included): so retries stay within budget_percent of first attempts, whatever the back-off
        int active = Math.max(0, requests.count() - retries.count());
        return Math.max(c.minRetryConcurrency(), (int) (active * c.budgetPercent() / 100.0));
    }
}
