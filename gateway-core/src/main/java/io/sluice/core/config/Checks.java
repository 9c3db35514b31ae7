package io.sluice.core.config;

import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** Small validation helpers shared by the config records. Paths here are field names. */
final class Checks {

    private Checks() {
    }

    static <T> T notNull(String field, T value) {
        if (value == null) {
            throw new ConfigException(field, null, "a value");
        }
        return value;
    }

    static String notBlank(String field, String value) {
        if (value == null || value.isBlank()) {
            throw new ConfigException(field, value, "a non-empty string");
        }
        return value;
    }

    static int range(String field, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ConfigException(field, value, "an integer in [" + min + ", " + max + "]");
        }
        return value;
    }

    static long atLeast(String field, long value, long min) {
        if (value < min) {
            throw new ConfigException(field, value, "an integer >= " + min);
        }
        return value;
    }

    static Duration positive(String field, Duration d) {
        notNull(field, d);
        if (d.isNegative() || d.isZero()) {
            throw new ConfigException(field, DurationFormat.format(d), "a duration > 0 such as \"5s\" or \"250ms\"");
        }
        return d;
    }

    static Duration nonNegative(String field, Duration d) {
        notNull(field, d);
        if (d.isNegative()) {
            throw new ConfigException(field, DurationFormat.format(d), "a duration >= 0 such as \"0s\" or \"250ms\"");
        }
        return d;
    }

    static Pattern regex(String field, String regex) {
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new ConfigException(field, regex, "a valid regular expression (" + e.getDescription() + ")");
        }
    }

    static <T> List<T> list(List<T> value) {
        return value == null ? List.of() : List.copyOf(value);
    }
}
