package io.sluice.core.cluster;

/** How one proxied request ended, as far as the upstream host is concerned (feeds passive outlier detection). */
public enum Outcome {
    /** A response arrived (any status below 500, or 5xx when 5xx are not counted). */
    SUCCESS,
    /** The TCP connection to the host could not be established. */
    CONNECT_FAILURE,
    /** The connection was reset or closed before a complete response. */
    RESET,
    /** No response within the timeout. */
    TIMEOUT,
    /** The host answered with a 5xx status (or a Bolt server error). */
    SERVER_ERROR;

    /** True for the failures that say the host itself is in trouble (gateway failures). */
    public boolean isGatewayFailure() {
        return this == CONNECT_FAILURE || this == RESET || this == TIMEOUT;
    }
}
