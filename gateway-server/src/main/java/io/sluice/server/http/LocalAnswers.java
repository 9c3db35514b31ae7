package io.sluice.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.http.ProxyHeads;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.server.route.Route;

import java.nio.charset.StandardCharsets;

/**
 * The answers a route gives by itself, without a cluster: a redirect ({@code Location} built from
 * the request and the route's rewrite of scheme, host, port, path or prefix, query kept unless
 * stripped) or a direct response (fixed status, small body).
 */
public final class LocalAnswers {

    private LocalAnswers() {
    }

    /** The status {@code route} answers with (it answers by itself). */
    public static int status(Route route) {
        RouteRules t = route.rules();
        return t.redirect() != null ? t.redirect().status() : t.directResponse().status();
    }

    /**
     * The whole response. {@code head}: a HEAD request (no body is sent, its length is); {@code tls}:
     * the client came over TLS (a redirect then keeps https unless it sets its scheme).
     */
    static ByteBuf response(ByteBufAllocator alloc, Route route, HttpHead req, boolean head, boolean keepAlive, boolean tls) {
        RouteRules t = route.rules();
        int status = status(route);
        StringBuilder sb = new StringBuilder(128).append("HTTP/1.1 ").append(status).append(' ')
                .append(HttpResponseStatus.valueOf(status).reasonPhrase()).append("\r\n");
        byte[] body;
        if (t.redirect() != null) {
            String target = req.forwardTarget() != null ? req.forwardTarget() : req.target();
            sb.append("Location: ").append(location(t.redirect(), route, req.authority(), target, tls)).append("\r\n");
            body = new byte[0];
        } else {
            RouteRules.DirectResponse d = t.directResponse();
            body = body(d);
            if (body.length > 0) {
                sb.append("Content-Type: ").append(contentType(d)).append("\r\n");
            }
        }
        sb.append("Content-Length: ").append(body.length).append("\r\n");
        if (!keepAlive) {
            sb.append("Connection: close\r\n");
        }
        sb.append("\r\n");
        ByteBuf out = alloc.directBuffer(sb.length() + body.length);
        ByteBufUtil.writeAscii(out, sb);
        if (!head) {
            out.writeBytes(body);
        }
        return out;
    }

    /** A direct response's body bytes (empty when it has none). */
    public static byte[] body(RouteRules.DirectResponse d) {
        return d.body() == null ? new byte[0] : d.body().getBytes(StandardCharsets.UTF_8);
    }

    /** A direct response's Content-Type (when it has a body). */
    public static String contentType(RouteRules.DirectResponse d) {
        return d.contentType() != null ? d.contentType() : "text/plain; charset=utf-8";
    }

    /**
     * The redirect's {@code Location}: the request's URL ({@code authority}, {@code target}: path
     * and query; scheme https when {@code tls}) with the redirect's parts replaced.
     */
    public static String location(RouteRules.Redirect r, Route route, String authority, String target, boolean tls) {
        String reqHost = authority == null ? "" : ProxyHeads.hostWithoutPort(authority);
        String reqPort = null;
        if (authority != null && !authority.endsWith("]")) {
            int colon = authority.lastIndexOf(':');
            if (colon >= 0 && authority.indexOf(']') < colon) {
                reqPort = authority.substring(colon + 1);
            }
        }
        String own = tls ? "https" : "http";
        String scheme = r.scheme() != null ? r.scheme() : r.httpsRedirect() ? "https" : own;
        boolean schemeChanged = !scheme.equals(own);
        String host = r.host() != null ? r.host() : reqHost;
        String port = r.port() > 0 ? String.valueOf(r.port()) : schemeChanged || r.host() != null ? null : reqPort;
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        String query = q < 0 || r.stripQuery() ? "" : target.substring(q);
        if (r.path() != null) {
            path = r.path();
        } else if (r.prefixRewrite() != null) {
            StringMatch m = route.config().match().path();
            String prefix = m != null && m.kind() == StringMatch.Kind.PREFIX ? m.value() : "";
            path = r.prefixRewrite() + (path.startsWith(prefix) ? path.substring(prefix.length()) : path);
        }
        return scheme + "://" + host + (port == null ? "" : ":" + port) + path + query;
    }
}
