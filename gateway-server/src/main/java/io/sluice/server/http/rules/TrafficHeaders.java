package io.sluice.server.http.rules;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.codec.http.HttpHead;
import io.sluice.core.config.RequestTracing;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The header work of one HTTP connection's exchanges: request ids, trace context and header
 * rules, applied to the heads the proxy has built ({@link HeadEdit}). The proxy calls it only when
 * the listener has tracing or the route has rules: with neither, a request costs two null checks.
 * One instance per connection, reused; event loop only.
 */
public final class TrafficHeaders {

    private static final byte[] X_REQUEST_ID = "x-request-id".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRACEPARENT = "traceparent".getBytes(StandardCharsets.US_ASCII);

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
            chosen = true;
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            if (tracing.requestId()) {
                String got = req.header("x-request-id");
                if (RequestIds.usable(got)) {
                    requestId = got; // passed on as it came
                } else {
                    requestId = RequestIds.next(rnd);
                    addedRequestId = requestId;
                }
            }
            if (tracing.traceparent()) {
                traceparent = TraceContext.next(req.header("traceparent"), rnd);
                traceId = TraceContext.traceId(traceparent);
            }
        }
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

    private void apply(HeaderRuleSet rules, String client, String route, String upstream) {
        for (byte[] d : rules.drop) {
            edit.drop(d);
        }
        for (int i = 0; i < rules.names.length; i++) {
            StringBuilder sb = edit.line(rules.names[i]);
            for (Object part : rules.values[i]) {
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
            edit.endLine();
        }
    }
}
