package io.sluice.core.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as operators write them in JSON: {@code "250ms"}, {@code "5s"}, {@code "1.5s"},
 * {@code "2m"}, {@code "1h"}, {@code "100us"}, {@code "0"}. Compound forms like {@code "1m30s"} are
 * accepted too (Go/MOSN style).
 */
public final class DurationFormat {

    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");
    private static final Pattern WHOLE = Pattern.compile("(?:\\d+(?:\\.\\d+)?(?:ns|us|µs|ms|s|m|h))+");

    private DurationFormat() {
    }

    /** Parses {@code text}; throws {@link IllegalArgumentException} with a one-line reason. */
    public static Duration parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("null duration");
        }
        String t = text.trim();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        if (!WHOLE.matcher(t).matches()) {
            throw new IllegalArgumentException("not a duration: " + text);
        }
        Matcher m = PART.matcher(t);
        double nanos = 0;
        while (m.find()) {
            double v = Double.parseDouble(m.group(1));
            nanos += v * switch (m.group(2)) {
                case "ns" -> 1d;
                case "us", "µs" -> 1e3;
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                case "h" -> 3600e9;
                default -> throw new IllegalArgumentException("unit " + m.group(2));
            };
        }
        return Duration.ofNanos(Math.round(nanos));
    }

    /** The shortest exact form: {@code "250ms"}, {@code "5s"}, {@code "90s"}. */
    public static String format(Duration d) {
        long nanos = d.toNanos();
        if (nanos == 0) {
            return "0s";
        }
        if (nanos % 1_000_000_000L == 0) {
            return nanos / 1_000_000_000L + "s";
        }
        if (nanos % 1_000_000L == 0) {
            return nanos / 1_000_000L + "ms";
        }
        if (nanos % 1_000L == 0) {
            return nanos / 1_000L + "us";
        }
        return nanos + "ns";
    }
}
