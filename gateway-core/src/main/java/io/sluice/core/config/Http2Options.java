package io.sluice.core.config;

import java.time.Duration;

/**
 * HTTP/2 on an HTTP (or {@code auto}) listener: cleartext h2c with prior knowledge next to HTTP/1.1 on
 * the same port, optional h2c {@code Upgrade}, and the limits that stop the known HTTP/2 attacks.
 * JSON: {@code listeners[i].http.http2}.
 *
 * @param enabled                      accept h2c (the connection preface) on this listener; false: an
 *                                     HTTP/2 client is answered as HTTP/1.1 (a 400)
 * @param h2cUpgrade                   honour {@code Upgrade: h2c} on a body-less HTTP/1.1 request (RFC 7540
 *                                     §3.2; deprecated by RFC 9113 but what the JDK HttpClient uses for
 *                                     {@code http://}); false: the request is served as HTTP/1.1 and the
 *                                     upgrade headers are not forwarded
 * @param maxConcurrentStreams         SETTINGS_MAX_CONCURRENT_STREAMS; a stream beyond it is refused
 *                                     (RST_STREAM REFUSED_STREAM), the connection lives on
 * @param initialWindowSize            SETTINGS_INITIAL_WINDOW_SIZE: request body bytes a stream may
 *                                     send ahead of what the upstream accepted
 * @param connectionWindowSize         the connection-level receive window (sent as a WINDOW_UPDATE on stream 0)
 * @param maxHeaderListSize            SETTINGS_MAX_HEADER_LIST_SIZE (decoded size, HPACK bombs and
 *                                     CONTINUATION floods): above it the stream is answered 431, above
 *                                     1.25 times it the connection gets GOAWAY
 * @param maxFrameSize                 SETTINGS_MAX_FRAME_SIZE
 * @param maxRstFramesPerWindow        rapid reset (CVE-2023-44487): RST_STREAM frames a client may send
 *                                     per {@code rstWindow}; more → GOAWAY ENHANCE_YOUR_CALM; 0 = no limit
 * @param rstWindow                    the window of {@code maxRstFramesPerWindow}
 * @param maxQueuedControlFrames       SETTINGS/PING acknowledgements and RST_STREAMs queued for a client
 *                                     that does not read; more → GOAWAY ENHANCE_YOUR_CALM and close
 * @param maxConsecutiveEmptyDataFrames DATA frames without payload (and without END_STREAM) in a row;
 *                                     more → GOAWAY ENHANCE_YOUR_CALM
 * @param maxSmallContinuationFrames   CONTINUATION frames smaller than 8 KiB in one header block (zero-byte
 *                                     CONTINUATION flood); more → GOAWAY ENHANCE_YOUR_CALM
 */
public record Http2Options(boolean enabled, boolean h2cUpgrade, int maxConcurrentStreams, int initialWindowSize,
                           int connectionWindowSize, int maxHeaderListSize, int maxFrameSize,
                           int maxRstFramesPerWindow, Duration rstWindow, int maxQueuedControlFrames,
                           int maxConsecutiveEmptyDataFrames, int maxSmallContinuationFrames) {

    public static final int DEFAULT_MAX_CONCURRENT_STREAMS = 100;
    public static final int DEFAULT_INITIAL_WINDOW_SIZE = 65_535;
    public static final int DEFAULT_CONNECTION_WINDOW_SIZE = 1 << 20;
    public static final int DEFAULT_MAX_HEADER_LIST_SIZE = 16_384;
    public static final int DEFAULT_MAX_FRAME_SIZE = 16_384;
    public static final int DEFAULT_MAX_RST_FRAMES_PER_WINDOW = 200;
    public static final Duration DEFAULT_RST_WINDOW = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_QUEUED_CONTROL_FRAMES = 10_000;
    public static final int DEFAULT_MAX_CONSECUTIVE_EMPTY_DATA_FRAMES = 2;
    public static final int DEFAULT_MAX_SMALL_CONTINUATION_FRAMES = 16;

    public Http2Options {
        Checks.range("max_concurrent_streams", maxConcurrentStreams, 1, Integer.MAX_VALUE);
        Checks.range("initial_window_size", initialWindowSize, 1024, Integer.MAX_VALUE);
        Checks.range("connection_window_size", connectionWindowSize, 65_535, Integer.MAX_VALUE);
        Checks.range("max_header_list_size", maxHeaderListSize, 1024, 1 << 20);
        Checks.range("max_frame_size", maxFrameSize, 16_384, (1 << 24) - 1);
        Checks.range("max_rst_frames_per_window", maxRstFramesPerWindow, 0, Integer.MAX_VALUE);
        rstWindow = rstWindow == null ? DEFAULT_RST_WINDOW : Checks.positive("rst_window", rstWindow);
        if (rstWindow.toSeconds() < 1 || rstWindow.toSeconds() > Integer.MAX_VALUE) {
            throw new ConfigException("rst_window", DurationFormat.format(rstWindow), "whole seconds, at least 1s");
        }
        Checks.range("max_queued_control_frames", maxQueuedControlFrames, 1, Integer.MAX_VALUE);
        Checks.range("max_consecutive_empty_data_frames", maxConsecutiveEmptyDataFrames, 1, Integer.MAX_VALUE);
        Checks.range("max_small_continuation_frames", maxSmallContinuationFrames, 1, Integer.MAX_VALUE);
    }

    public static Http2Options defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.enabled = enabled;
        b.h2cUpgrade = h2cUpgrade;
        b.maxConcurrentStreams = maxConcurrentStreams;
        b.initialWindowSize = initialWindowSize;
        b.connectionWindowSize = connectionWindowSize;
        b.maxHeaderListSize = maxHeaderListSize;
        b.maxFrameSize = maxFrameSize;
        b.maxRstFramesPerWindow = maxRstFramesPerWindow;
        b.rstWindow = rstWindow;
        b.maxQueuedControlFrames = maxQueuedControlFrames;
        b.maxConsecutiveEmptyDataFrames = maxConsecutiveEmptyDataFrames;
        b.maxSmallContinuationFrames = maxSmallContinuationFrames;
        return b;
    }

    /** Builds an {@link Http2Options}; validation happens in the record's constructor. */
    public static final class Builder {
        private boolean enabled = true;
        private boolean h2cUpgrade = false;
        private int maxConcurrentStreams = DEFAULT_MAX_CONCURRENT_STREAMS;
        private int initialWindowSize = DEFAULT_INITIAL_WINDOW_SIZE;
        private int connectionWindowSize = DEFAULT_CONNECTION_WINDOW_SIZE;
        private int maxHeaderListSize = DEFAULT_MAX_HEADER_LIST_SIZE;
        private int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
        private int maxRstFramesPerWindow = DEFAULT_MAX_RST_FRAMES_PER_WINDOW;
        private Duration rstWindow = DEFAULT_RST_WINDOW;
        private int maxQueuedControlFrames = DEFAULT_MAX_QUEUED_CONTROL_FRAMES;
        private int maxConsecutiveEmptyDataFrames = DEFAULT_MAX_CONSECUTIVE_EMPTY_DATA_FRAMES;
        private int maxSmallContinuationFrames = DEFAULT_MAX_SMALL_CONTINUATION_FRAMES;

        private Builder() {
        }

        public Builder enabled(boolean v) { this.enabled = v; return this; }

        public Builder h2cUpgrade(boolean v) { this.h2cUpgrade = v; return this; }

        public Builder maxConcurrentStreams(int v) { this.maxConcurrentStreams = v; return this; }

        public Builder initialWindowSize(int v) { this.initialWindowSize = v; return this; }

        public Builder connectionWindowSize(int v) { this.connectionWindowSize = v; return this; }

        public Builder maxHeaderListSize(int v) { this.maxHeaderListSize = v; return this; }

        public Builder maxFrameSize(int v) { this.maxFrameSize = v; return this; }

        public Builder maxRstFramesPerWindow(int v) { this.maxRstFramesPerWindow = v; return this; }

        public Builder rstWindow(Duration v) { this.rstWindow = v; return this; }

        public Builder maxQueuedControlFrames(int v) { this.maxQueuedControlFrames = v; return this; }

        public Builder maxConsecutiveEmptyDataFrames(int v) { this.maxConsecutiveEmptyDataFrames = v; return this; }

        public Builder maxSmallContinuationFrames(int v) { this.maxSmallContinuationFrames = v; return this; }

        public Http2Options build() {
            return new Http2Options(enabled, h2cUpgrade, maxConcurrentStreams, initialWindowSize, connectionWindowSize,
                    maxHeaderListSize, maxFrameSize, maxRstFramesPerWindow, rstWindow, maxQueuedControlFrames,
                    maxConsecutiveEmptyDataFrames, maxSmallContinuationFrames);
        }
    }
}
