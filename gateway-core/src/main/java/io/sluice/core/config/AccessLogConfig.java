package io.sluice.core.config;

/**
 * The access log: one line per finished request, written by a background thread from a bounded
 * queue (when the queue is full the line is dropped and counted; an event loop never waits).
 *
 * @param enabled   write it at all (default off)
 * @param path      {@code "stdout"} or a file (appended to)
 * @param format    {@code "text"} (space-separated fields) or {@code "json"} (one object per line)
 * @param queueSize lines that may wait for the writer
 */
public record AccessLogConfig(boolean enabled, String path, String format, int queueSize) {

    public AccessLogConfig {
        path = path == null ? "stdout" : Checks.notBlank("path", path);
        format = format == null ? "text" : format;
        if (!format.equals("text") && !format.equals("json")) {
            throw new ConfigException("format", format, "\"text\" or \"json\"");
        }
        Checks.range("queue_size", queueSize, 1, 10_000_000);
    }

    public static AccessLogConfig disabled() {
        return new AccessLogConfig(false, "stdout", "text", 65_536);
    }
}
