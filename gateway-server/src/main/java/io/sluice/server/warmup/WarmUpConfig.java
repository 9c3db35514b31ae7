package io.sluice.server.warmup;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DurationFormat;

import java.time.Duration;
import java.util.Objects;

/**
 * The warm start (docs/operations.md#warm-up): before any listener binds, the gateway drives its
 * own codecs, proxy handlers, connection pools, load balancer and meters through synthetic
 * exchanges with loopback backends owned by the warm-up, so that the JIT has compiled the hot paths
 * before the first real request. It never connects to a configured upstream and records nothing in
 * the gateway's meters or access log.
 *
 * <p>Read at start only (top-level {@code warm_up} of the native config; a reload ignores it).
 * The standalone jar has it on by default ({@link #standaloneDefault()}, {@code --no-warm-up} turns
 * it off); a gateway embedded with {@code Gateway.builder()} runs none unless given one.
 *
 * @param enabled  run the warm-up at all
 * @param duration how long it may drive traffic, on the gateway's ticker (100 ms to 60 s); the
 *                 gateway starts accepting right after (plus the few milliseconds it takes to stop
 *                 the synthetic peers)
 */
public record WarmUpConfig(boolean enabled, Duration duration) {

    public static final Duration DEFAULT_DURATION = Duration.ofSeconds(3);
    public static final Duration MIN_DURATION = Duration.ofMillis(100);
    public static final Duration MAX_DURATION = Duration.ofSeconds(60);

    public WarmUpConfig {
        duration = duration == null ? DEFAULT_DURATION : duration;
        if (duration.compareTo(MIN_DURATION) < 0 || duration.compareTo(MAX_DURATION) > 0) {
            throw new ConfigException("duration", DurationFormat.format(duration), "a duration from 100ms to 60s such as \"3s\"");
        }
    }

    /** What the standalone jar runs when the config says nothing: on, {@value #DEFAULT_SECONDS} s. */
    public static WarmUpConfig standaloneDefault() {
        return new WarmUpConfig(true, DEFAULT_DURATION);
    }

    static final int DEFAULT_SECONDS = 3;

    /** No warm-up (the default of an embedded gateway). */
    public static WarmUpConfig disabled() {
        return new WarmUpConfig(false, DEFAULT_DURATION);
    }

    public WarmUpConfig withEnabled(boolean on) {
        return new WarmUpConfig(on, duration);
    }

    public WarmUpConfig withDuration(Duration d) {
        return new WarmUpConfig(enabled, Objects.requireNonNull(d));
    }
}
