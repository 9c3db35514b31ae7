package io.sluice.core.config;

import java.util.Locale;

/**
 * Event-loop transport.
 *
 * @param type          {@code auto} (epoll when available, else nio), {@code epoll}, {@code io_uring}, {@code nio}
 * @param workerThreads worker event loops; 0 = number of available processors
 * @param backlog       listen backlog
 * @param reusePort     one listening socket per worker event loop (SO_REUSEPORT; epoll and io_uring):
 *                      the kernel spreads new connections over the workers, none is handed between
 *                      threads; off: one socket, accepted on one worker
 */
public record TransportConfig(String type, int workerThreads, int backlog, boolean reusePort) {

    public TransportConfig(String type, int workerThreads, int backlog) {
        this(type, workerThreads, backlog, false);
    }

    public TransportConfig {
        type = type == null ? "auto" : type.toLowerCase(Locale.ROOT);
        if (!type.equals("auto") && !type.equals("epoll") && !type.equals("io_uring") && !type.equals("nio")) {
            throw new ConfigException("type", type, "one of \"auto\", \"epoll\", \"io_uring\", \"nio\"");
        }
        Checks.range("worker_threads", workerThreads, 0, 1024);
        Checks.range("backlog", backlog, 1, 1 << 20);
        if (reusePort && type.equals("nio")) {
            throw new ConfigException("reuse_port", true,
                    "false with the nio transport (sharing a port between sockets needs epoll or io_uring)");
        }
    }

    public static TransportConfig defaults() {
        return builder().build();
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.type = type;
        b.workerThreads = workerThreads;
        b.backlog = backlog;
        b.reusePort = reusePort;
        return b;
    }

    /**
     * Builds a {@link TransportConfig} (defaults: those of {@link #defaults()}). Validation happens in the
     * record's constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private String type = "auto";
        private int workerThreads;
        private int backlog = 1024;
        private boolean reusePort;

        private Builder() {
        }

        public Builder type(String type) {
            this.type = type;
            return this;
        }

        public Builder workerThreads(int workerThreads) {
            this.workerThreads = workerThreads;
            return this;
        }

        public Builder backlog(int backlog) {
            this.backlog = backlog;
            return this;
        }

        public Builder reusePort(boolean reusePort) {
            this.reusePort = reusePort;
            return this;
        }

        public TransportConfig build() {
            return new TransportConfig(type, workerThreads, backlog, reusePort);
        }
    }
}
