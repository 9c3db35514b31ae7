package io.sluice.server.accesslog;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.core.config.AccessLogConfig;
import io.sluice.server.channel.RequestEnd;
import io.sluice.server.channel.RequestLog;
import io.sluice.core.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The access log: handlers {@link #log offer} one entry per finished request to a bounded queue
 * (never blocking: a full queue drops the entry and counts it in {@code sluice.accesslog.dropped});
 * one daemon thread formats and writes, flushing whenever the queue runs empty.
 */
public final class AccessLog implements AutoCloseable, RequestLog {

    private static final Logger log = LoggerFactory.getLogger(AccessLog.class);

    /**
     * One finished request. {@code target} is "METHOD path" for HTTP, "service#method" for Bolt.
     *
     * @param attempts   upstream attempts (1 + retries)
     * @param clientCert the verified client certificate (TLS listeners with client auth), or null
     * @param traceId    HTTP: traceparent's trace id, else x-request-id; Bolt: sofaTraceId; or null
     */
    public record Entry(long epochMillis, String listener, String protocol, String client, String target, int status,
                        String outcome, String upstream, long bytesOut, long durationMicros, int attempts,
                        String clientCert, String traceId) {

        /** An entry of one attempt, without client certificate or trace id. */
        public Entry(long epochMillis, String listener, String protocol, String client, String target, int status,
                     String outcome, String upstream, long bytesOut, long durationMicros) {
            this(epochMillis, listener, protocol, client, target, status, outcome, upstream, bytesOut, durationMicros, 1, null, null);
        }
    }

    private final BlockingQueue<Entry> queue;
    private final boolean json;
    private final Writer out;
    private final boolean ownsOut;
    private final Counter written;
    private final Counter dropped;
    private final Thread writer;
    private volatile boolean closed;

    private AccessLog(AccessLogConfig config, Writer out, boolean ownsOut, MeterRegistry registry) {
        this.queue = new ArrayBlockingQueue<>(config.queueSize());
        this.json = config.format().equals("json");
        this.out = out;
        this.ownsOut = ownsOut;
        this.written = Counter.builder("sluice.accesslog.written").description("Access log lines written").register(registry);
        this.dropped = Counter.builder("sluice.accesslog.dropped")
                .description("Access log lines dropped because the writer fell behind").register(registry);
        this.writer = new Thread(this::run, "sluice-access-log");
        this.writer.setDaemon(true);
        this.writer.start();
    }

    /** Opens the configured log, or returns null when it is disabled. */
    public static AccessLog open(AccessLogConfig config, MeterRegistry registry) {
        if (!config.enabled()) {
            return null;
        }
        if (config.path().equals("stdout")) {
            return new AccessLog(config, new OutputStreamWriter(System.out, StandardCharsets.UTF_8), false, registry);
        }
        try {
            Writer w = Files.newBufferedWriter(Path.of(config.path()), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
            return new AccessLog(config, w, true, registry);
        } catch (IOException e) {
            throw new ConfigException("$.access_log.path", config.path(),
                    "a writable file (" + e.getMessage() + ")");
        }
    }

    /** Queues the entry of a finished request (the one allocation the log costs); never blocks. */
    @Override
    public void requestEnded(RequestEnd e) {
        log(new Entry(System.currentTimeMillis(), e.listener(), e.protocol(), e.client, e.target == null ? "-" : e.target,
                e.status, e.outcome.tag(), e.upstream(), e.bytesOut, e.durationNanos / 1000, e.attempts, e.clientCert,
                e.traceId));
    }

    /** Queues an entry; never blocks. */
    public void log(Entry e) {
        if (closed || !queue.offer(e)) {
            dropped.increment();
        }
    }

    private void run() {
        Writer w = out instanceof BufferedWriter ? out : new BufferedWriter(out, 64 * 1024);
        List<Entry> batch = new ArrayList<>(256);
        StringBuilder sb = new StringBuilder(256);
        try {
            while (!closed || !queue.isEmpty()) {
                Entry first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, 1023);
                for (Entry e : batch) {
                    sb.setLength(0);
                    format(e, sb);
                    w.write(sb.toString());
                }
                written.increment(batch.size());
                batch.clear();
                if (queue.isEmpty()) {
                    w.flush();
                }
            }
            w.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            log.warn("access log stopped: {}", e.toString());
        }
    }

    void format(Entry e, StringBuilder sb) {
        if (json) {
            sb.append("{\"time\":\"").append(Instant.ofEpochMilli(e.epochMillis())).append("\",\"listener\":");
            quote(sb, e.listener()).append(",\"protocol\":\"").append(e.protocol()).append("\",\"client\":");
            quote(sb, e.client()).append(",\"request\":");
            quote(sb, e.target()).append(",\"status\":").append(e.status()).append(",\"outcome\":\"").append(e.outcome())
                    .append("\",\"upstream\":");
            quote(sb, e.upstream()).append(",\"bytes_out\":").append(e.bytesOut()).append(",\"duration_us\":")
                    .append(e.durationMicros()).append(",\"attempts\":").append(e.attempts());
            if (e.clientCert() != null) { // TLS: the verified client certificate
                quote(sb.append(",\"client_cert\":"), e.clientCert());
            }
            quote(sb.append(",\"trace_id\":"), e.traceId()).append("}\n");
        } else {
            sb.append(Instant.ofEpochMilli(e.epochMillis())).append(' ').append(e.listener()).append(' ')
                    .append(e.protocol()).append(' ').append(e.client()).append(" \"").append(e.target()).append("\" ")
                    .append(e.status()).append(' ').append(e.outcome()).append(' ')
                    .append(e.upstream() == null ? "-" : e.upstream()).append(' ').append(e.bytesOut()).append(' ')
                    .append(e.durationMicros()).append("us ").append(e.traceId() == null ? "-" : e.traceId());
            if (e.attempts() > 1) {
                sb.append(" attempts=").append(e.attempts()); // retried (resilience)
            }
            if (e.clientCert() != null) { // TLS: the verified client certificate
                sb.append(" cert=\"").append(e.clientCert().replace("\"", "'")).append('"');
            }
            sb.append('\n');
        }
    }

    private static StringBuilder quote(StringBuilder sb, String s) {
        if (s == null) {
            return sb.append("null");
        }
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"');
    }

    /** Writes what is queued, then stops the writer. */
    @Override
    public void close() {
        closed = true;
        try {
            writer.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsOut) {
            try {
                out.close();
            } catch (IOException e) {
                log.debug("closing the access log: {}", e.toString());
            }
        }
    }
}
