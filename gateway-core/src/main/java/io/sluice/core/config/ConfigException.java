package io.sluice.core.config;

/**
 * A configuration value that cannot be used. Carries the JSON path of the offending value (for
 * example {@code $.clusters[0].hosts[2].weight}), the value itself and what was expected, so an
 * operator can fix the file from the message alone.
 */
public final class ConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final String value;
    private final String expected;

    private final String detail;

    public ConfigException(String path, Object value, String expected) {
        this(path, value == null ? "null" : String.valueOf(value),
                (value == null ? "missing or null" : "bad value " + quote(value)) + "; expected " + expected, expected);
    }

    private ConfigException(String path, String value, String detail, String expected) {
        super(path + ": " + detail);
        this.path = path;
        this.value = value;
        this.detail = detail;
        this.expected = expected;
    }

    private static String quote(Object value) {
        return value instanceof String s ? '"' + s + '"' : String.valueOf(value);
    }

    /** The JSON path of the bad value, relative to the root ({@code $}). */
    public String path() {
        return path;
    }

    public String value() {
        return value;
    }

    public String expected() {
        return expected;
    }

    /**
     * Returns the same error with its path placed under {@code prefix}: records validate their own
     * fields by name ({@code weight}); the loader knows where the record sits ({@code $.clusters[0].hosts[2]}).
     */
    public ConfigException under(String prefix) {
        String p = path.startsWith("$") ? path.substring(1) : (path.isEmpty() ? "" : "." + path);
        ConfigException e = new ConfigException(prefix + p, value, detail, expected);
        e.setStackTrace(getStackTrace());
        return e;
    }
}
