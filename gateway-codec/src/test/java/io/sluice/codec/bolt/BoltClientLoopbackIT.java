package io.sluice.codec.bolt;

import com.alipay.remoting.exception.CodecException;
import com.alipay.remoting.exception.ConnectionClosedException;
import com.alipay.remoting.exception.DeserializationException;
import com.alipay.remoting.exception.SerializationException;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.exception.InvokeException;
import com.alipay.remoting.rpc.exception.InvokeSendFailedException;
import com.alipay.remoting.rpc.exception.InvokeServerBusyException;
import com.alipay.remoting.rpc.exception.InvokeServerException;
import com.alipay.remoting.rpc.exception.InvokeTimeoutException;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A real bolt {@code RpcClient} over loopback against a minimal Netty server made of
 * {@link BoltFrameDecoder}, {@link BoltFrameEncoder} and a handler that answers every request with
 * the error status named in its body, built by {@link BoltFrames}. Proves, end to end through the
 * client's own connection, CRC and response handling, that each gateway-made error raises its
 * matching exception (not a decode error or a client-side timeout), in v1 and in v2 with CRC.
 */
class BoltClientLoopbackIT {

    private static EventLoopGroup group;
    private static Channel server;
    private static int port;
    private static volatile BoltFraming lastRequestFraming;

    @BeforeAll
    static void start() throws Exception {
        // no netty epoll classes on this module's test classpath: let bolt use NIO
        System.setProperty("bolt.netty.epoll.switch", "false");
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new BoltFrameDecoder(), BoltFrameEncoder.INSTANCE, new ErrorAnswerer());
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
        port = ((InetSocketAddress) server.localAddress()).getPort();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close().sync();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "?_PROTOCOL=2&_VERSION=2"})
    void everyErrorStatusRaisesItsExceptionInTheRealClient(String urlSuffix) {
        BoltFraming framing = urlSuffix.isEmpty() ? BoltFraming.V1 : BoltFraming.V2_VER2_CRC;
        Map<Integer, Class<? extends Throwable>> expected = new LinkedHashMap<>();
        expected.put(BoltStatus.ERROR, InvokeException.class);
        expected.put(BoltStatus.SERVER_EXCEPTION, InvokeServerException.class);
        expected.put(BoltStatus.UNKNOWN, InvokeException.class);
        expected.put(BoltStatus.SERVER_THREADPOOL_BUSY, InvokeServerBusyException.class);
        expected.put(BoltStatus.ERROR_COMM, InvokeException.class);
        expected.put(BoltStatus.NO_PROCESSOR, InvokeException.class);
        expected.put(BoltStatus.TIMEOUT, InvokeTimeoutException.class);
        expected.put(BoltStatus.CLIENT_SEND_ERROR, InvokeSendFailedException.class);
        expected.put(BoltStatus.CODEC_EXCEPTION, CodecException.class);
        expected.put(BoltStatus.CONNECTION_CLOSED, ConnectionClosedException.class);
        expected.put(BoltStatus.SERVER_SERIAL_EXCEPTION, SerializationException.class);
        expected.put(BoltStatus.SERVER_DESERIAL_EXCEPTION, DeserializationException.class);
        String addr = "127.0.0.1:" + port + urlSuffix;
        // one client per framing: bolt pools connections by ip:port and pins the framing per connection
        RpcClient client = new RpcClient();
        client.startup();
        try {
            invokeAll(client, addr, framing, expected);
        } finally {
            client.shutdown();
        }
    }

    private static void invokeAll(RpcClient client, String addr, BoltFraming framing,
                                  Map<Integer, Class<? extends Throwable>> expected) {
        for (Map.Entry<Integer, Class<? extends Throwable>> e : expected.entrySet()) {
            Throwable thrown = catchThrowable(() -> client.invokeSync(addr, "status=" + e.getKey(), 3000));
            assertThat(thrown).as("status %s via %s", BoltStatus.name(e.getKey()), addr)
                    .isExactlyInstanceOf(e.getValue());
            if (e.getKey() == BoltStatus.SERVER_EXCEPTION) {
                // the body reached the client as a readable string (no decode error)
                assertThat(thrown.getMessage()).contains("Server exception");
            }
            assertThat(lastRequestFraming).isEqualTo(framing);
        }
    }

    /** Answers requests with the status in the body ("status=N"), acks heartbeats, drops the rest. */
    private static final class ErrorAnswerer extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof BoltDecodeError error) {
                if (error.answerable()) {
                    ctx.writeAndFlush(BoltFrames.codecErrorResponse(ctx.alloc(), error));
                }
                ctx.close();
                return;
            }
            BoltFrame frame = (BoltFrame) msg;
            try {
                if (frame.type() != BoltType.REQUEST) {
                    return;
                }
                if (frame.isHeartbeat()) {
                    ctx.writeAndFlush(BoltFrames.heartbeatAck(ctx.alloc(), frame));
                    return;
                }
                lastRequestFraming = frame.framing();
                String body = frame.contentBytes().toString(StandardCharsets.US_ASCII);
                int status = Integer.parseInt(body.substring(body.indexOf("status=") + 7).trim());
                ctx.writeAndFlush(BoltFrames.errorResponse(ctx.alloc(), frame, status, "sluice says " + BoltStatus.name(status)));
            } finally {
                frame.release();
            }
        }
    }
}
