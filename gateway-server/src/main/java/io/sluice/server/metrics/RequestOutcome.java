package io.sluice.server.metrics;

/** How a downstream request ended, from the client's point of view (the {@code outcome} tag). */
public enum RequestOutcome {
    /** Proxied; the upstream's response (any status) reached the client. */
    PROXIED("proxied"),
    /** Answered by the route itself: a redirect or a direct response. */
    LOCAL("local"),
    NO_ROUTE("no_route"),
    NO_HEALTHY_HOST("no_healthy_host"),
    CONNECT_FAILURE("connect_failure"),
    CONNECT_TIMEOUT("connect_timeout"),
    UPSTREAM_RESET("upstream_reset"),
    UPSTREAM_TIMEOUT("upstream_timeout"),
    BAD_REQUEST("bad_request"),
    URI_TOO_LONG("uri_too_long"),
    HEADERS_TOO_LARGE("headers_too_large"),
    BODY_TOO_LARGE("body_too_large"),
    HEADER_TIMEOUT("header_timeout"),
    /** HTTP: the client stopped sending an incomplete request body for {@code request_body_timeout}. */
    BODY_TIMEOUT("body_timeout"),
    /** HTTP: the client stopped reading its response for {@code write_timeout}; both sides were closed. */
    WRITE_TIMEOUT("write_timeout"),
    CLIENT_CLOSED("client_closed"),
    CODEC_ERROR("codec_error"),
    OVERLOADED("overloaded"),
    /** A rate-limit rule refused the request (HTTP 429, Bolt SERVER_THREADPOOL_BUSY). */
    RATE_LIMITED("rate_limited");

    private final String tag;

    RequestOutcome(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
