package io.sluice.core.config;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * When and how a failed upstream attempt is tried again (per route, with a cluster-level default).
 * No policy (null) = no retries.
 *
 * @param retryOn              the conditions (at least one)
 * @param retriableStatusCodes statuses retried with {@link RetryOn#RETRIABLE_STATUS_CODES}
 * @param numRetries           retries after the first attempt, in [0, 10]
 * @param perTryTimeout        the response timeout of one attempt (null = the route's timeout, which then
 *                             also bounds the whole request including retries and back-off)
 * @param baseInterval         back-off base: retry N waits a random time in [0, (2^N - 1) × base)
 * @param maxInterval          back-off cap (default 10 × base)
 * @param maxBodyBytes         request body bytes kept to replay on a retry; a larger body is not retried
 * @param retryNonIdempotent   retry POST, PATCH, ... after bytes were sent (connect failures are always retried)
 * @param idempotent           the service tolerates repeats: timeouts may be retried (required for Bolt
 *                             timeouts and for {@link RetryOn#TIMEOUT})
 * @param includeAttemptCount  send {@code x-sluice-attempt: 1} on first attempts too (retries always carry it)
 */
public record RetryPolicyConfig(Set<RetryOn> retryOn, List<Integer> retriableStatusCodes, int numRetries,
                                Duration perTryTimeout, Duration baseInterval, Duration maxInterval,
                                int maxBodyBytes, boolean retryNonIdempotent, boolean idempotent,
                                boolean includeAttemptCount) {

    public static final int DEFAULT_NUM_RETRIES = 2;
    public static final Duration DEFAULT_BASE_INTERVAL = Duration.ofMillis(25);
    public static final int DEFAULT_MAX_BODY_BYTES = 64 * 1024;

    public RetryPolicyConfig {
        retryOn = retryOn == null || retryOn.isEmpty() ? defaultRetryOn() : Set.copyOf(retryOn);
        retriableStatusCodes = Checks.list(retriableStatusCodes);
        for (int i = 0; i < retriableStatusCodes.size(); i++) {
            Integer s = retriableStatusCodes.get(i);
            if (s == null || s < 100 || s > 599) {
                throw new ConfigException("retriable_status_codes[" + i + "]", s, "an HTTP status in [100, 599]");
            }
        }
        if (retryOn.contains(RetryOn.RETRIABLE_STATUS_CODES) && retriableStatusCodes.isEmpty()) {
            throw new ConfigException("retriable_status_codes", "[]",
                    "at least one status when retry_on has \"retriable-status-codes\"");
        }
        Checks.range("num_retries", numRetries, 0, 10);
        if (perTryTimeout != null) {
            Checks.positive("per_try_timeout", perTryTimeout);
        }
        baseInterval = baseInterval == null ? DEFAULT_BASE_INTERVAL : Checks.positive("base_interval", baseInterval);
        maxInterval = maxInterval == null ? baseInterval.multipliedBy(10) : Checks.positive("max_interval", maxInterval);
        if (maxInterval.compareTo(baseInterval) < 0) {
            throw new ConfigException("max_interval", DurationFormat.format(maxInterval),
                    "a duration >= base_interval (" + DurationFormat.format(baseInterval) + ")");
        }
        Checks.range("max_body_bytes", maxBodyBytes, 0, 64 * 1024 * 1024);
    }

    /** Envoy/Istio-like safe default conditions: connect failures and refused streams. */
    public static Set<RetryOn> defaultRetryOn() {
        return Set.copyOf(EnumSet.of(RetryOn.CONNECT_FAILURE, RetryOn.REFUSED_STREAM));
    }

    /** A policy with every default (connect-failure + refused-stream, 2 retries, 25 ms / 250 ms, 64 KiB). */
    public static RetryPolicyConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.retryOn = retryOn;
        b.retriableStatusCodes = retriableStatusCodes;
        b.numRetries = numRetries;
        b.perTryTimeout = perTryTimeout;
        b.baseInterval = baseInterval;
        b.maxInterval = maxInterval;
        b.maxBodyBytes = maxBodyBytes;
        b.retryNonIdempotent = retryNonIdempotent;
        b.idempotent = idempotent;
        b.includeAttemptCount = includeAttemptCount;
        return b;
    }

    /** Builds a {@link RetryPolicyConfig}; validation happens in {@link #build()}. */
    public static final class Builder {
        private Set<RetryOn> retryOn;
        private List<Integer> retriableStatusCodes = List.of();
        private int numRetries = DEFAULT_NUM_RETRIES;
        private Duration perTryTimeout;
        private Duration baseInterval;
        private Duration maxInterval;
        private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
        private boolean retryNonIdempotent;
        private boolean idempotent;
        private boolean includeAttemptCount;

        private Builder() {
        }

        public Builder retryOn(Set<RetryOn> retryOn) {
            this.retryOn = retryOn;
            return this;
        }

        public Builder retryOn(RetryOn... retryOn) {
            this.retryOn = Set.of(retryOn);
            return this;
        }

        public Builder retriableStatusCodes(List<Integer> codes) {
            this.retriableStatusCodes = codes;
            return this;
        }

        public Builder numRetries(int numRetries) {
            this.numRetries = numRetries;
            return this;
        }

        public Builder perTryTimeout(Duration perTryTimeout) {
            this.perTryTimeout = perTryTimeout;
            return this;
        }

        public Builder baseInterval(Duration baseInterval) {
            this.baseInterval = baseInterval;
            return this;
        }

        public Builder maxInterval(Duration maxInterval) {
            this.maxInterval = maxInterval;
            return this;
        }

        public Builder maxBodyBytes(int maxBodyBytes) {
            this.maxBodyBytes = maxBodyBytes;
            return this;
        }

        public Builder retryNonIdempotent(boolean retryNonIdempotent) {
            this.retryNonIdempotent = retryNonIdempotent;
            return this;
        }

        public Builder idempotent(boolean idempotent) {
            this.idempotent = idempotent;
            return this;
        }

        public Builder includeAttemptCount(boolean includeAttemptCount) {
            this.includeAttemptCount = includeAttemptCount;
            return this;
        }

        public RetryPolicyConfig build() {
            return new RetryPolicyConfig(retryOn, retriableStatusCodes, numRetries, perTryTimeout, baseInterval,
                    maxInterval, maxBodyBytes, retryNonIdempotent, idempotent, includeAttemptCount);
        }
    }
}
