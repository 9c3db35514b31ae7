package io.sluice.server.tls;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.sluice.server.channel.ConnectionTimer;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import java.security.cert.CertPathValidatorException;
import java.security.cert.Certificate;
import java.security.cert.CertificateExpiredException;
import java.security.cert.X509Certificate;
import java.util.Locale;

/**
 * {@link io.sluice.server.channel.SluicePipeline#TLS_HANDSHAKE}, right after the SNI/SSL handler:
 * the handshake timeout (a {@link ConnectionTimer} on the listener's scheduler, so tests drive it on
 * a fake clock; Netty's own wall-clock timeout is off), the handshake's outcome (counted once, by
 * reason), and on success the client's verified identity ({@link PeerIdentity#KEY}). Until the
 * handshake succeeds nothing reaches the protocol handlers behind it: a failure or timeout closes
 * the connection here. Afterwards it only passes events on.
 */
final class TlsConnectionHandler extends ChannelInboundHandlerAdapter {

    private final DownstreamTls tls;
    private final long timeoutNanos;
    private ConnectionTimer timer;
    private ChannelHandlerContext ctx;
    /** 0 handshaking, 1 succeeded, 2 failed (counted). */
    private int state;

    TlsConnectionHandler(DownstreamTls tls, long timeoutNanos) {
        this.tls = tls;
        this.timeoutNanos = timeoutNanos;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            arm();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        arm();
        super.channelActive(ctx);
    }

    private void arm() {
        if (timer == null && state == 0) {
            timer = new ConnectionTimer(tls.scheduler(ctx.executor()), this::onTimeout);
            timer.armIn(timeoutNanos);
        }
    }

    private void onTimeout() {
        timer = null;
        if (state == 0) {
            fail("timeout");
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof SslHandshakeCompletionEvent e && state == 0) {
            cancel();
            if (e.isSuccess()) {
                state = 1;
                succeeded(ctx);
            } else {
                fail(reason(e.cause()));
                return;
            }
        }
        super.userEventTriggered(ctx, evt);
    }

    private void succeeded(ChannelHandlerContext ctx) {
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        SSLSession session = ssl == null ? null : ssl.engine().getSession();
        tls.metrics().handshake(true, "ok");
        if (session == null) {
            return;
        }
        String protocol = session.getProtocol();
        tls.metrics().negotiated(protocol, session.getCipherSuite());
        if ("TLSv1.3".equals(protocol) && tls.current().config().sessionTickets()) {
            SessionTickets.flush(ctx, ssl);
        }
        if (!ssl.engine().getNeedClientAuth() && !ssl.engine().getWantClientAuth()) {
            return; // no client certificate was asked for: nothing to read (the lookup throws, with a stack trace)
        }
        try {
            Certificate[] peer = session.getPeerCertificates();
            if (peer.length > 0 && peer[0] instanceof X509Certificate leaf) {
                ctx.channel().attr(PeerIdentity.KEY).set(PeerIdentity.of(leaf));
            }
        } catch (SSLPeerUnverifiedException e) {
            // no client certificate (none asked for, or optional and not sent)
        }
    }

    private void fail(String reason) {
        state = 2;
        cancel();
        tls.metrics().handshake(false, reason);
        ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (state == 1) {
            super.exceptionCaught(ctx, cause);
        } else if (state == 0) {
            fail(reason(cause)); // before the SSL handler exists (a ClientHello that does not parse)
        }
        // state 2: the failure was counted; the connection is closing
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancel();
        if (state == 0) {
            state = 2;
            tls.metrics().handshake(false, "closed");
        }
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancel();
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }

    /** The reason tag of a failed handshake, from the exception and its causes. */
    static String reason(Throwable cause) {
        String reason = "other";
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CertificateExpiredException) {
                return "expired";
            }
            if (t instanceof CertPathValidatorException cpe && cpe.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
                return "expired";
            }
            if (t instanceof NotSslRecordException) {
                return "not_tls";
            }
            String m = String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
            if (m.contains("peer_did_not_return_a_certificate") || m.contains("empty client certificate chain")
                    || m.contains("certificate_required") || m.contains("no client certificate")) {
                return "no_certificate";
            }
            if (m.contains("expired") || m.contains("notafter")) {
                return "expired";
            }
            if (m.contains("unsupported_protocol") || m.contains("protocol_version") || m.contains("wrong_version_number")
                    || m.contains("not enabled or supported") || m.contains("protocol version")) {
                return "protocol";
            }
            if (m.contains("no_shared_cipher") || m.contains("no appropriate cipher") || m.contains("cipher suites in common")) {
                return "cipher";
            }
            if (m.contains("certificate_verify_failed") || m.contains("pkix") || m.contains("unknown_ca")
                    || m.contains("certification path")) {
                reason = "unknown_ca"; // a later cause may say it is more precisely expired
            } else if (t instanceof DecoderException && reason.equals("other") && t.getCause() == null) {
                reason = "not_tls";
            }
        }
        return reason;
    }
}
