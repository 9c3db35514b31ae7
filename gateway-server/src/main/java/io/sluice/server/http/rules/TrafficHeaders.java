package io.sluice.server.http.rules;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.AsciiString;
import io.sluice.codec.http.HttpHead;
import io.sluice.core.config.RequestTracing;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The header work of one HTTP connection's exchanges (or one HTTP/2 stream's): request ids, trace
 * context and header rules, applied to the heads the proxy has built ({@link HeadEdit}) or, for
 * HTTP/2, to header lists. The proxy calls it only when
 * the listener has tracing or the route has rules: with neither, a request costs two null checks.
 * One instance per connection, reused; event loop only.
 */
public final class TrafficHeaders {

    private static final byte[] X_REQUEST_ID = "x-request-id".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRACEPARENT = "traceparent".getBytes(StandardCharsets.US_ASCII);
    private static final AsciiString X_REQUEST_ID_NAME = AsciiString.cached("x-request-id");
    private static final AsciiString TRACEPARENT_NAME = AsciiString.cached("traceparent");

    private final HeadEdit edit = new HeadEdit();
    private String requestId;
    private String traceId;
    /** Ids chosen for the current exchange: a retry attempt sends the same ones. */
    private boolean chosen;
    /** The request id to add (null: none to add, the client's is passed on) and the traceparent to send. */
    private String addedRequestId;
    private String traceparent;

    /** Forgets the previous exchange's ids. */
    public void reset() {
        requestId = null;
        traceId = null;
        addedRequestId = null;
        traceparent = null;
        chosen = false;
    }

    /**
     * The request head for the upstream with ids, trace context and the route's request rules.
     * Takes ownership of {@code head}. Ids are chosen at the exchange's first call; every retry
     * attempt of the exchange sends the same request id and traceparent.
     *
     * @param tracing the listener's tracing, or null
     * @param rules   the route's request rules, or null
     */
    public ByteBuf request(ByteBufAllocator alloc, ByteBuf head, HttpHead req, RequestTracing tracing,
                           HeaderRuleSet rules, String client, String route, String upstream) {
        edit.clear();
        if (tracing != null && !chosen) {
            choose(tracing, tracing.requestId() ? req.header("x-request-id") : null,
                    tracing.traceparent() ? req.header("traceparent") : null);
        }
        return editRequest(alloc, head, rules, client, route, upstream);
    }

    /**
     * {@link #request(ByteBufAllocator, ByteBuf, HttpHead, RequestTracing, HeaderRuleSet, String, String, String)}
     * for a request that did not arrive as HTTP/1.1 (an HTTP/2 stream sent to an HTTP/1.1 upstream):
     * the client's {@code x-request-id} and {@code traceparent} are given.
     */
    public ByteBuf request(ByteBufAllocator alloc, ByteBuf head, CharSequence requestIdIn, CharSequence traceparentIn,
                           RequestTracing tracing, HeaderRuleSet rules, String client, String route, String upstream) {
        edit.clear();
        if (tracing != null && !chosen) {
            choose(tracing, requestIdIn == null ? null : requestIdIn.toString(), traceparentIn);
        }
        return editRequest(alloc, head, rules, client, route, upstream);
    }

    /**
     * HTTP/2 to an HTTP/2 upstream: the same ids, trace context and request rules applied to the
     * header list {@code h} sent upstream (edited in place; names in HTTP/2's lower case).
     */
    public void request(Http2Headers h, RequestTracing tracing, HeaderRuleSet rules, String client, String route,
                        String upstream) {
        if (tracing != null && !chosen) {
            CharSequence id = h.get(X_REQUEST_ID_NAME);
            choose(tracing, id == null ? null : id.toString(), h.get(TRACEPARENT_NAME));
        }
        if (addedRequestId != null) {
            h.set(X_REQUEST_ID_NAME, addedRequestId);
        }
        if (traceparent != null) {
            h.set(TRACEPARENT_NAME, traceparent);
        }
        if (rules != null) {
            apply(h, rules, client, route, upstream);
        }
    }

    /** HTTP/2: the echoed request id and the response rules applied to the response header list {@code h} (in place). */
    public void response(Http2Headers h, RequestTracing tracing, HeaderRuleSet rules, String client, String route,
                         String upstream) {
        if (tracing != null && tracing.echoRequestId() && requestId != null) {
            h.set(X_REQUEST_ID_NAME, requestId);
        }
        if (rules != null) {
            apply(h, rules, client, route, upstream);
        }
    }

    private void choose(RequestTracing tracing, String requestIdIn, CharSequence traceparentIn) {
        chosen = true;
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        if (tracing.requestId()) {
            if (RequestIds.usable(requestIdIn)) {
                requestId = requestIdIn; // passed on as it came
            } else {
                requestId = RequestIds.next(rnd);
                addedRequestId = requestId;
            }
        }
        if (tracing.traceparent()) {
            traceparent = TraceContext.next(traceparentIn, rnd);
            traceId = TraceContext.traceId(traceparent);
        }
    }

    private ByteBuf editRequest(ByteBufAllocator alloc, ByteBuf head, HeaderRuleSet rules, String client, String route,
                                String upstream) {
        if (addedRequestId != null) {
            edit.drop(X_REQUEST_ID).add("x-request-id", addedRequestId);
        }
        if (traceparent != null) {
            edit.drop(TRACEPARENT).add("traceparent", traceparent);
        }
        if (rules != null) {
            apply(rules, client, route, upstream);
        }
        return edit.apply(alloc, head);
    }

    /** The response head for the client with the echoed request id and the route's response rules. Takes ownership of {@code head}. */
    public ByteBuf response(ByteBufAllocator alloc, ByteBuf head, RequestTracing tracing, HeaderRuleSet rules,
                            String client, String route, String upstream) {
        edit.clear();
        if (tracing != null && tracing.echoRequestId() && requestId != null) {
            edit.drop(X_REQUEST_ID).add("x-request-id", requestId);
        }
        if (rules != null) {
            apply(rules, client, route, upstream);
        }
        return edit.apply(alloc, head);
    }

    /** The id the access log shows: the trace id, else the request id, else null. */
    public String logId() {
        return traceId != null ? traceId : requestId;
    }

    private void apply(Http2Headers h, HeaderRuleSet rules, String client, String route, String upstream) {
        for (AsciiString d : rules.dropH2) {
            h.remove(d);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < rules.names.length; i++) {
            sb.setLength(0);
            value(sb, rules.values[i], client, route, upstream);
            h.add(rules.namesH2[i], sb.toString());
        }
    }

    private void value(StringBuilder sb, Object[] parts, String client, String route, String upstream) {
        for (Object part : parts) {
            if (part instanceof String s) {
                sb.append(s);
            } else {
                String v = switch ((Integer) part) {
                    case HeaderRuleSet.CLIENT -> client;
                    case HeaderRuleSet.REQUEST_ID -> requestId;
                    case HeaderRuleSet.ROUTE -> route;
                    case HeaderRuleSet.UPSTREAM -> upstream;
                    case HeaderRuleSet.TRACE_ID -> traceId;
                    default -> null;
                };
                sb.append(v == null ? "-" : v);
            }
        }
    }

    private void apply(HeaderRuleSet rules, String client, String route, String upstream) {
        for (byte[] d : rules.drop) {
            edit.drop(d);
        }
        for (int i = 0; i < rules.names.length; i++) {
            value(edit.line(rules.names[i]), rules.values[i], client, route, upstream);
            edit.endLine();
        }
    }
}
