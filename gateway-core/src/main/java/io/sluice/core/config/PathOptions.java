package io.sluice.core.config;

import java.util.Locale;

/**
 * How the path of a request is normalized before it is routed and forwarded (dot segments are
 * always removed and percent-encoded unreserved characters decoded; see docs/security.md).
 *
 * @param escapedSlashes what {@code %2F} and {@code %5C} in a path do
 * @param mergeSlashes   merge runs of {@code /} into one
 */
public record PathOptions(EscapedSlashes escapedSlashes, boolean mergeSlashes) {

    /** {@code %2F} / {@code %5C} in a path: refused with 400, kept encoded, or decoded to {@code /}. */
    public enum EscapedSlashes {
        REJECT, KEEP, DECODE;

        public String jsonName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public PathOptions {
        escapedSlashes = escapedSlashes == null ? EscapedSlashes.REJECT : escapedSlashes;
    }

    /** Escaped slashes refused, slashes not merged. */
    public static PathOptions defaults() {
        return new PathOptions(EscapedSlashes.REJECT, false);
    }
}
