package io.sluice.server.policy.breaker;

import io.sluice.core.config.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The counting limits and the retry budget of {@link CircuitBreaker}. */
class CircuitBreakerTest {

    @Test
    void aLimitAdmitsUpToItsMaxThenRefusesAndCountsAndRecoversBelowNinetyPercent() {
        CircuitBreaker b = new CircuitBreaker("c", CircuitBreakerConfig.builder().maxRequests(10).build());
        for (int i = 0; i < 10; i++) {
            assertThat(b.tryRequest()).isTrue();
        }
        assertThat(b.requests().remaining()).isZero();
        assertThat(b.requests().open()).as("at the limit but nothing refused yet").isFalse();
        assertThat(b.tryRequest()).isFalse();
        assertThat(b.tryRequest()).isFalse();
        assertThat(b.requests().overflows()).isEqualTo(2);
        assertThat(b.requests().count()).as("a refusal holds no slot").isEqualTo(10);
        assertThat(b.requests().open()).isTrue();
        b.requestDone(); // 9: not below 90 % yet
        assertThat(b.requests().open()).isTrue();
        b.requestDone(); // 8 < 9
        assertThat(b.requests().open()).isFalse();
        assertThat(b.requests().remaining()).isEqualTo(2);
    }

    @Test
    void theRetryBudgetIsAShareOfTheRequestsNotRetryingWithAFloor() {
        CircuitBreaker b = new CircuitBreaker("c", CircuitBreakerConfig.builder().budgetPercent(20).minRetryConcurrency(3).build());
        assertThat(b.retryLimit()).as("floor with nothing active").isEqualTo(3);
        for (int i = 0; i < 50; i++) {
            b.tryRequest();
        }
        assertThat(b.retryLimit()).isEqualTo(10);
        int granted = 0;
        while (b.tryRetry()) {
            granted++;
        }
        // 50 active of which g retrying: g <= 0.2 * (50 - g) -> g = 8
        assertThat(granted).isEqualTo(8);
        assertThat(b.retries().overflows()).isEqualTo(1);
        b.retryDone();
        assertThat(b.tryRetry()).isTrue();
    }

    @Test
    void aZeroPercentBudgetIsAStaticRetryLimitAndReloadsChangeLimitsInPlace() {
        CircuitBreaker b = new CircuitBreaker("c", CircuitBreakerConfig.builder().budgetPercent(0).minRetryConcurrency(3).build());
        for (int i = 0; i < 100; i++) {
            b.tryRequest();
        }
        assertThat(b.tryRetry()).isTrue();
        assertThat(b.tryRetry()).isTrue();
        assertThat(b.tryRetry()).isTrue();
        assertThat(b.tryRetry()).as("Envoy's max_retries 3").isFalse();
        b.configure(CircuitBreakerConfig.builder().maxRequests(50).budgetPercent(0).minRetryConcurrency(3).build());
        assertThat(b.requests().count()).as("slots held survive the reload").isEqualTo(100);
        assertThat(b.tryRequest()).isFalse();
    }
}
