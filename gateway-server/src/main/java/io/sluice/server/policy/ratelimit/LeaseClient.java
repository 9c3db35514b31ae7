package io.sluice.server.policy.ratelimit;

/** Where global buckets lease tokens from (the Redis link). Calls never block. */
interface LeaseClient {

    /** Whether the backend is connected and answering. */
    boolean up();

    /**
     * Asks for {@code want} tokens of the bucket {@code key} (capacity {@code maxTokens},
     * {@code tokensPerFill} per {@code fillMillis}); the callback runs later on the client's event loop
     * (or at once, failed, when the backend is down).
     */
    void lease(String key, long maxTokens, long tokensPerFill, long fillMillis, int want, Callback callback);

    interface Callback {
        /** {@code tokens} granted (0..want); {@code millisUntilFill}: until the bucket's next refill. */
        void granted(long tokens, long millisUntilFill);

        /** No answer (error, timeout, connection lost). */
        void failed();
    }
}
