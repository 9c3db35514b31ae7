package io.sluice.server.http2;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrame;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.UpstreamHttp2Config;
import io.sluice.core.config.UpstreamProtocol;
import io.sluice.core.time.ManualScheduler;
import io.sluice.server.http.HttpUpstreamPool;
import io.sluice.server.http.HttpUpstreamPools;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * PING keep-alive of pooled HTTP/2 upstream connections ({@code http2.ping_interval} 30 s,
 * {@code ping_timeout} 5 s) against a real HTTP/2 server, timing on a {@link ManualScheduler}
 * driven on the pool's event loop: a PING exactly {@code ping_interval} after the last stream
 * activity or ACK, and the connection closed exactly {@code ping_timeout} after an unanswered one.
 */
class H2UpstreamPingTest {

    @Test
    void idleConnectionsArePingedAndClosedWhenTheAckDoesNotCome() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (H2TestUpstream server = new H2TestUpstream(100)) {
            EventLoop loop = group.next();
            ManualScheduler clock = new ManualScheduler();
            Bootstrap template = new Bootstrap().group(loop).channel(NioSocketChannel.class).option(ChannelOption.ALLOCATOR, Bufs.ALLOC);
            HttpUpstreamPool up = HttpUpstreamPools.create(loop, clock, template);
            ClusterConfig cluster = ClusterConfig.builder().name("up").hosts(new HostConfig("127.0.0.1", server.port(), 1))
                    .upstreamProtocol(UpstreamProtocol.H2C)
                    .http2(new UpstreamHttp2Config(Duration.ofSeconds(30), Duration.ofSeconds(5))).build();
            Host host = new Host(cluster.hosts().get(0));
            CompletableFuture<Channel> connection = new CompletableFuture<>();
            CompletableFuture<Void> answered = new CompletableFuture<>();
            loop.execute(() -> H2UpstreamPool.current().open(up, host, cluster, new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    if (msg instanceof Http2StreamFrame f && f instanceof io.netty.handler.codec.http2.Http2DataFrame d && d.isEndStream()) {
                        answered.complete(null);
                    }
                    ReferenceCountUtil.release(msg);
                }
            }, (Http2StreamChannel s, String why) -> {
                s.writeAndFlush(new DefaultHttp2HeadersFrame(H2TestClient.get("/x"), true));
                connection.complete(s.parent());
            }));
            Channel ch = connection.get(10, TimeUnit.SECONDS);
            answered.get(10, TimeUnit.SECONDS); // the last stream activity: clock 0
            await().atMost(Duration.ofSeconds(10)).until(() -> on(loop, () -> server.requests.size() == 1));

            advance(loop, clock, Duration.ofMillis(29_999));
            assertThat(state(loop, host)).isEqualTo("sent=0 awaiting=false");
            advance(loop, clock, Duration.ofMillis(1)); // 30 s idle: PING
            assertThat(state(loop, host)).startsWith("sent=1 "); // its ACK may be back already
            await().atMost(Duration.ofSeconds(10)).until(() -> state(loop, host).equals("sent=1 awaiting=false")); // ACK

            server.ackPings = false;
            advance(loop, clock, Duration.ofMillis(29_999)); // the ACK counts as activity (it came at clock 30 s)
            assertThat(state(loop, host)).isEqualTo("sent=1 awaiting=false");
            advance(loop, clock, Duration.ofMillis(1));
            assertThat(state(loop, host)).isEqualTo("sent=2 awaiting=true");
            await().atMost(Duration.ofSeconds(10)).until(() -> server.pings.get() == 2);
            advance(loop, clock, Duration.ofMillis(4_999));
            assertThat(ch.isActive()).isTrue();
            advance(loop, clock, Duration.ofMillis(1)); // ping_timeout without an ACK: closed
            assertThat(ch.closeFuture().await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(server.pings.get()).isEqualTo(2);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static String state(EventLoop loop, Host host) throws Exception {
        return on(loop, () -> H2UpstreamPool.current().pingState("up", host));
    }

    private static void advance(EventLoop loop, ManualScheduler clock, Duration d) throws Exception {
        on(loop, () -> {
            clock.advance(d);
            return null;
        });
    }

    private static <T> T on(EventLoop loop, Callable<T> c) throws Exception {
        return loop.submit(c).get(10, TimeUnit.SECONDS);
    }
}
