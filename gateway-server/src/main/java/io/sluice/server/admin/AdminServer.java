package io.sluice.server.admin;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.sluice.core.config.AdminConfig;
import io.sluice.server.transport.Sockets;

import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * The admin listener: an HTTP/1.1 server for {@link AdminHandler} on its own event loop (not the
 * workers: the admin API answers even when the data path is saturated).
 */
public final class AdminServer {

    private final AdminConfig config;
    private final AdminHandler handler;
    private final ChannelGroup channels = new DefaultChannelGroup("sluice-admin", GlobalEventExecutor.INSTANCE);
    private volatile Channel server;

    public AdminServer(AdminConfig config, AdminHandler handler) {
        this.config = config;
        this.handler = handler;
    }

    /**
     * Binds {@code admin.address:admin.port} on {@code loop}. Completes with the listening channel,
     * or fails with a {@link BindException} naming the address and port
     * ({@code cannot listen on 127.0.0.1:34901 (admin): Address already in use}).
     */
    public CompletableFuture<Channel> bind(EventLoopGroup loop, Class<? extends ServerChannel> channelType) {
        ServerBootstrap b = new ServerBootstrap()
                .group(loop)
                .channel(channelType)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        channels.add(ch);
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024), handler);
                    }
                });
        ChannelFuture f = b.bind(config.address(), config.port());
        server = f.channel();
        CompletableFuture<Channel> c = new CompletableFuture<>();
        f.addListener(x -> {
            if (x.isSuccess()) {
                c.complete(f.channel());
            } else {
                c.completeExceptionally(Sockets.bindFailure("admin", config.address(), config.port(), x.cause()));
            }
        });
        return c;
    }

    /** The bound address, or null before the bind completed. */
    public InetSocketAddress address() {
        Channel s = server;
        return s == null ? null : (InetSocketAddress) s.localAddress();
    }

    /** Closes the listening socket and every admin connection. Never blocks. */
    public void close() {
        Channel s = server;
        if (s != null) {
            s.close();
        }
        channels.close();
    }
}
