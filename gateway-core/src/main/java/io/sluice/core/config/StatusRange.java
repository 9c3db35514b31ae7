package io.sluice.core.config;

/** An inclusive range of HTTP status codes, e.g. 200..299. */
public record StatusRange(int from, int to) {

    public StatusRange {
        Checks.range("from", from, 100, 599);
        Checks.range("to", to, 100, 599);
        if (to < from) {
            throw new ConfigException("to", to, "a status >= from (" + from + ")");
        }
    }

    public boolean contains(int status) {
        return status >= from && status <= to;
    }
}
