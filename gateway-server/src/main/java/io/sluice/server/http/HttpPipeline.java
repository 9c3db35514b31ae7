package io.sluice.server.http;

/** Names (and order) of the handlers in Sluice's HTTP pipelines. */
final class HttpPipeline {

    /** Downstream: the request {@code Http1Decoder} (nothing encodes: the proxy writes bytes). */
    static final String SERVER_CODEC = "http-server-codec";
    /** Downstream: {@link HttpProxyHandler}. */
    static final String PROXY = "http-proxy";
    /** Upstream: the response {@code Http1Decoder}. */
    static final String UPSTREAM_CODEC = "http-client-codec";
    /** Upstream: {@link UpstreamHandler}. */
    static final String UPSTREAM_HANDLER = "http-upstream";

    private HttpPipeline() {
    }
}
