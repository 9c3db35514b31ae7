package io.sluice.server.http2;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.sluice.codec.http.HttpHead;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.http.HttpListenerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

/**
 * h2c {@code Upgrade} from HTTP/1.1 (RFC 7540 §3.2; removed from RFC 9113 but what the JDK
 * HttpClient sends for {@code http://} with HTTP/2 preferred), on listeners with
 * {@code http.http2.h2c_upgrade: true}. A body-less HTTP/1.1 request with {@code Upgrade: h2c},
 * {@code Connection: Upgrade, HTTP2-Settings} and one valid {@code HTTP2-Settings} is answered with
 * {@code 101 Switching Protocols}; the connection becomes HTTP/2 ({@link Http2Server#install}) and
 * the request becomes stream 1, proxied like any other stream. Anything else is served as
 * HTTP/1.1 (the upgrade headers are hop-by-hop and never forwarded).
 */
public final class H2cUpgrade {

    private static final Logger LOG = LoggerFactory.getLogger(H2cUpgrade.class);
    private static final byte[] SWITCHING = ("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    /** Netty's upgrade event has a package-private constructor; the codec needs that event to start stream 1. */
    private static final Constructor<HttpServerUpgradeHandler.UpgradeEvent> EVENT = eventConstructor();

    private H2cUpgrade() {
    }

    private static Constructor<HttpServerUpgradeHandler.UpgradeEvent> eventConstructor() {
        try {
            Constructor<HttpServerUpgradeHandler.UpgradeEvent> c = HttpServerUpgradeHandler.UpgradeEvent.class
                    .getDeclaredConstructor(CharSequence.class, FullHttpRequest.class);
            c.setAccessible(true);
            return c;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LoggerFactory.getLogger(H2cUpgrade.class).warn("h2c upgrade unavailable: {}", e.toString());
            return null;
        }
    }

    /**
     * Upgrades the connection if {@code req} asks for h2c and may have it; then it owns (and
     * releases) {@code req}. Called by the HTTP/1.1 proxy handler before it routes a request.
     *
     * @return false: not an upgrade (or not one we take): serve {@code req} as HTTP/1.1
     */
    public static boolean upgrade(ChannelHandlerContext ctx, HttpListenerContext lc, HttpHead req) {
        if (EVENT == null || req.isHttp10() || !req.isComplete() || lc.draining()) {
            return false;
        }
        String upgrade = req.header("upgrade");
        if (upgrade == null || !hasToken(upgrade, "h2c")) {
            return false;
        }
        String connection = req.header("connection");
        String settingsHeader = req.header("http2-settings");
        if (connection == null || !hasToken(connection, "http2-settings") || !hasToken(connection, "upgrade")
                || settingsHeader == null || req.indexOf(HttpHead.HOST) < 0) {
            return false;
        }
        Http2Settings settings = decodeSettings(settingsHeader);
        if (settings == null) {
            return false;
        }
        FullHttpRequest full = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(req.method()),
                req.forwardTarget() != null ? req.forwardTarget() : req.target(), Unpooled.EMPTY_BUFFER);
        for (int i = 0; i < req.headerCount(); i++) {
            byte kind = req.kind(i);
            if (kind == HttpHead.CONNECTION || kind == HttpHead.HOP || kind == HttpHead.TRANSFER_ENCODING
                    || req.nameIs(i, "http2-settings")) {
                continue;
            }
            full.headers().add(req.name(i), req.value(i));
        }
        full.headers().set(HttpConversionUtil.ExtensionHeaderNames.SCHEME.text(), "http");
        req.release();
        ByteBuf switching = ctx.alloc().buffer(SWITCHING.length).writeBytes(SWITCHING);
        ctx.writeAndFlush(switching, ctx.voidPromise());
        Http2FrameCodec codec = Http2Server.install(ctx.channel(), lc);
        try {
            codec.onHttpServerUpgrade(settings);
            HttpServerUpgradeHandler.UpgradeEvent evt = EVENT.newInstance("h2c", full);
            codec.userEventTriggered(ctx.pipeline().context(SluicePipeline.H2_CODEC), evt);
        } catch (Exception e) {
            LOG.debug("h2c upgrade failed on {}", ctx.channel(), e);
            full.release();
            ctx.channel().close();
        }
        return true;
    }

    /** The base64url SETTINGS payload of {@code HTTP2-Settings}, or null when malformed. */
    static Http2Settings decodeSettings(String v) {
        byte[] b;
        try {
            b = Base64.getUrlDecoder().decode(v.trim());
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (b.length % 6 != 0) {
            return null;
        }
        Http2Settings s = new Http2Settings();
        try {
            for (int i = 0; i < b.length; i += 6) {
                char id = (char) (((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF));
                long value = ((b[i + 2] & 0xFFL) << 24) | ((b[i + 3] & 0xFFL) << 16) | ((b[i + 4] & 0xFFL) << 8) | (b[i + 5] & 0xFFL);
                if (id >= 1 && id <= 6) {
                    s.put(id, Long.valueOf(value));
                }
            }
        } catch (IllegalArgumentException e) {
            return null;
        }
        return s;
    }

    private static boolean hasToken(String list, String token) {
        for (String t : list.split(",")) {
            if (t.trim().toLowerCase(Locale.ROOT).equals(token)) {
                return true;
            }
        }
        return false;
    }
}
