package io.sluice.server.warmup;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.codec.bolt.BoltFrameEncoder;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltProtocol;
import io.sluice.codec.bolt.BoltType;
import io.sluice.server.transport.Transport;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * The warm-up's Bolt backend on 127.0.0.1: answers every RPC request (protocol v1) with a SUCCESS
 * response carrying a small Hessian string, acks heartbeats, ignores oneway requests. Runs on the
 * warm-up's own event loop and lives only as long as the warm-up.
 */
final class SyntheticBolt implements AutoCloseable {

    private static final byte[] CLASS = "java.lang.String".getBytes(StandardCharsets.US_ASCII);
    /** Hessian2 compact string "ok". */
    private static final byte[] CONTENT = {0x02, 'o', 'k'};

    private final Channel channel;

    private SyntheticBolt(Channel channel) {
        this.channel = channel;
    }

    static SyntheticBolt start(Transport transport, EventLoopGroup group, io.netty.buffer.ByteBufAllocator alloc)
            throws InterruptedException {
        Channel ch = new ServerBootstrap()
                .group(group)
                .channel(transport.serverChannel())
                .option(ChannelOption.ALLOCATOR, alloc)
                .childOption(ChannelOption.ALLOCATOR, alloc)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(new BoltFrameDecoder(), BoltFrameEncoder.INSTANCE, new Responder());
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
        return new SyntheticBolt(ch);
    }

    int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
    }

    /** A v1 SUCCESS response to {@code requestId}: header, class, content. */
    static ByteBuf response(io.netty.buffer.ByteBufAllocator alloc, int requestId, int codec) {
        ByteBuf b = alloc.buffer(20 + CLASS.length + CONTENT.length);
        b.writeByte(BoltProtocol.PROTOCOL_V1).writeByte(BoltType.RESPONSE.code()).writeShort(BoltProtocol.CMD_RPC_RESPONSE)
                .writeByte(1).writeInt(requestId).writeByte(codec).writeShort(0)
                .writeShort(CLASS.length).writeShort(0).writeInt(CONTENT.length)
                .writeBytes(CLASS).writeBytes(CONTENT);
        return b;
    }

    private static final class Responder extends SimpleChannelInboundHandler<BoltFrame> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, BoltFrame f) {
            if (f.isHeartbeat()) {
                if (!f.isResponse()) {
                    ctx.writeAndFlush(BoltFrames.heartbeatAck(ctx.alloc(), f), ctx.voidPromise());
                }
            } else if (f.isRequest() && !f.isOneway() && f.framing() == BoltFraming.V1) {
                ctx.writeAndFlush(response(ctx.alloc(), f.requestId(), f.codec()), ctx.voidPromise());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
