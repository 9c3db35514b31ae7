package io.sluice.codec.http;

/**
 * The settings of one {@link Http1Decoder}, in one object instead of a constructor ladder.
 *
 * @param maxInitialLineLength longest request or status line, line break included (requests: 414 beyond)
 * @param maxHeaderSize        largest header section after the start line, and largest trailer section
 *                             (requests: 431 beyond)
 * @param escapedSlashes       requests: what {@code %2F} / {@code %5C} in a path do (see {@link PathNormalizer})
 * @param mergeSlashes         requests: merge runs of {@code /} in the path before routing and forwarding
 */
public record Http1DecoderConfig(int maxInitialLineLength, int maxHeaderSize,
                                 PathNormalizer.EscapedSlashes escapedSlashes, boolean mergeSlashes) {

    public Http1DecoderConfig {
        if (maxInitialLineLength < 16 || maxHeaderSize < 16) {
            throw new IllegalArgumentException("limits too small: " + maxInitialLineLength + ", " + maxHeaderSize);
        }
        if (escapedSlashes == null) {
            escapedSlashes = PathNormalizer.EscapedSlashes.REJECT;
        }
    }

    /** The given limits; escaped slashes rejected, slashes not merged. */
    public static Http1DecoderConfig of(int maxInitialLineLength, int maxHeaderSize) {
        return new Http1DecoderConfig(maxInitialLineLength, maxHeaderSize, PathNormalizer.EscapedSlashes.REJECT, false);
    }

    public Http1DecoderConfig withPath(PathNormalizer.EscapedSlashes escaped, boolean merge) {
        return new Http1DecoderConfig(maxInitialLineLength, maxHeaderSize, escaped, merge);
    }
}
