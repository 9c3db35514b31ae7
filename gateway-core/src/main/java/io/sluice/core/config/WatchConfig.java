package io.sluice.core.config;

import java.time.Duration;

/**
 * Watching the config file ({@code sluice -c FILE}) and reloading it when it changes. Off by
 * default; the command-line flag {@code --watch} turns it on too. The file is polled every
 * {@code interval}: a change of its size or modification time, then of its content, is reloaded
 * once the file has stayed the same for one more interval.
 *
 * @param enabled  poll the file at all
 * @param interval time between two polls (at least 100 ms)
 */
public record WatchConfig(boolean enabled, Duration interval) {

    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(2);
    public static final Duration MIN_INTERVAL = Duration.ofMillis(100);

    public WatchConfig {
        interval = interval == null ? DEFAULT_INTERVAL : interval;
        if (interval.compareTo(MIN_INTERVAL) < 0) {
            throw new ConfigException("interval", DurationFormat.format(interval), "a duration >= 100ms such as \"2s\"");
        }
    }

    public static WatchConfig disabled() {
        return new WatchConfig(false, DEFAULT_INTERVAL);
    }

    public WatchConfig withEnabled(boolean on) {
        return new WatchConfig(on, interval);
    }
}
