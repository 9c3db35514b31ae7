package io.sluice.core.config;

import java.util.regex.Pattern;

/** Matches a string exactly, by prefix, or by a regular expression (whole-string match). */
public final class StringMatch {

    public enum Kind { EXACT, PREFIX, REGEX }

    private final Kind kind;
    private final String value;
    private final Pattern pattern;

    private StringMatch(Kind kind, String value, Pattern pattern) {
        this.kind = kind;
        this.value = value;
        this.pattern = pattern;
    }

    public static StringMatch exact(String value) {
        return new StringMatch(Kind.EXACT, Checks.notNull("exact", value), null);
    }

    public static StringMatch prefix(String value) {
        return new StringMatch(Kind.PREFIX, Checks.notNull("prefix", value), null);
    }

    public static StringMatch regex(String value) {
        return new StringMatch(Kind.REGEX, value, Checks.regex("regex", Checks.notNull("regex", value)));
    }

    public Kind kind() {
        return kind;
    }

    public String value() {
        return value;
    }

    public boolean matches(CharSequence s) {
        if (s == null) {
            return false;
        }
        return switch (kind) {
            case EXACT -> value.contentEquals(s);
            case PREFIX -> s.length() >= value.length() && s.toString().startsWith(value);
            case REGEX -> pattern.matcher(s).matches();
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StringMatch m && m.kind == kind && m.value.equals(value);
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + value.hashCode();
    }

    @Override
    public String toString() {
        return kind.name().toLowerCase() + ":" + value;
    }
}
