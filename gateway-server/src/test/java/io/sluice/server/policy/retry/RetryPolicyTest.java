package io.sluice.server.policy.retry;

import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.sluice.server.policy.retry.RetryPolicy.Failure.CONNECT_FAILURE;
import static io.sluice.server.policy.retry.RetryPolicy.Failure.RESET;
import static io.sluice.server.policy.retry.RetryPolicy.Failure.STATUS;
import static io.sluice.server.policy.retry.RetryPolicy.Failure.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

/** Which outcomes each {@code retry_on} condition retries, and the method guard. */
class RetryPolicyTest {

    private static RetryPolicy of(RetryOn... on) {
        return RetryPolicy.of(RetryPolicyConfig.builder().retryOn(on).retriableStatusCodes(List.of(409)).build());
    }

    @Test
    void conditions() {
        RetryPolicy connect = of(RetryOn.CONNECT_FAILURE);
        assertThat(connect.retriesHttp(CONNECT_FAILURE, 0, false)).as("nothing sent: any method").isTrue();
        assertThat(connect.retriesHttp(RESET, 0, true)).isFalse();
        assertThat(connect.retriesHttp(STATUS, 503, true)).isFalse();

        RetryPolicy gateway = of(RetryOn.GATEWAY_ERROR);
        assertThat(gateway.retriesHttp(STATUS, 502, true)).isTrue();
        assertThat(gateway.retriesHttp(STATUS, 504, true)).isTrue();
        assertThat(gateway.retriesHttp(STATUS, 500, true)).isFalse();
        assertThat(gateway.retriesHttp(CONNECT_FAILURE, 0, false)).isTrue();
        assertThat(gateway.retriesHttp(RESET, 0, true)).isTrue();
        assertThat(gateway.retriesHttp(RESET, 0, false)).as("sent, not replay-safe").isFalse();
        assertThat(gateway.retriesHttp(TIMEOUT, 0, true)).isTrue();

        RetryPolicy fiveXx = of(RetryOn.FIVE_XX);
        assertThat(fiveXx.retriesHttp(STATUS, 500, true)).isTrue();
        assertThat(fiveXx.retriesHttp(STATUS, 503, false)).isFalse();
        assertThat(fiveXx.retriesHttp(STATUS, 409, true)).isFalse();

        RetryPolicy codes = of(RetryOn.RETRIABLE_STATUS_CODES);
        assertThat(codes.retriesHttp(STATUS, 409, true)).isTrue();
        assertThat(codes.retriesHttp(STATUS, 503, true)).isFalse();
        assertThat(codes.retriesHttp(RESET, 0, true)).isFalse();
    }

    /** HTTP/2 upstreams: a refused stream was not processed, retried on refused-stream and on everything implying reset. */
    @Test
    void refusedStream() {
        assertThat(of(RetryOn.REFUSED_STREAM).retriesRefusedStream()).isTrue();
        assertThat(of(RetryOn.RESET).retriesRefusedStream()).isTrue();
        assertThat(of(RetryOn.FIVE_XX).retriesRefusedStream()).isTrue();
        assertThat(of(RetryOn.GATEWAY_ERROR).retriesRefusedStream()).isTrue();
        assertThat(of(RetryOn.CONNECT_FAILURE).retriesRefusedStream()).isFalse();
        assertThat(of(RetryOn.RETRIABLE_STATUS_CODES).retriesRefusedStream()).isFalse();
    }

    @Test
    void methodsAndBolt() {
        RetryPolicy p = of(RetryOn.FIVE_XX);
        assertThat(p.replaySafe("GET")).isTrue();
        assertThat(p.replaySafe("PUT")).isTrue();
        assertThat(p.replaySafe("POST")).isFalse();
        assertThat(p.replaySafe("PATCH")).isFalse();
        RetryPolicy post = RetryPolicy.of(RetryPolicyConfig.builder().retryOn(RetryOn.FIVE_XX).retryNonIdempotent(true).build());
        assertThat(post.replaySafe("POST")).isTrue();

        RetryPolicy bolt = of(RetryOn.CONNECTION_CLOSED, RetryOn.SERVER_THREADPOOL_BUSY);
        assertThat(bolt.retriesBolt(CONNECT_FAILURE)).isTrue();
        assertThat(bolt.retriesBolt(RESET)).isTrue();
        assertThat(bolt.retriesBolt(TIMEOUT)).as("timeouts only for idempotent services").isFalse();
        assertThat(bolt.retriesBoltStatus(false, true)).isTrue();
        assertThat(bolt.retriesBoltStatus(true, false)).isFalse();
        RetryPolicy idempotent = RetryPolicy.of(RetryPolicyConfig.builder().retryOn(RetryOn.TIMEOUT).idempotent(true).build());
        assertThat(idempotent.retriesBolt(TIMEOUT)).isTrue();
        assertThat(RetryPolicy.of(RetryPolicyConfig.builder().numRetries(0).build())).as("0 retries: no policy").isNull();
    }
}
