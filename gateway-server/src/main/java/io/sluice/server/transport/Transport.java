package io.sluice.server.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringChannelOption;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.TransportConfig;

/**
 * The native (epoll, io_uring) or NIO flavour of event loops and channel classes. {@code auto}
 * picks epoll when the native library loads, else NIO; {@code io_uring} must be asked for.
 */
public enum Transport {
    EPOLL("epoll", EpollServerSocketChannel.class, EpollSocketChannel.class),
    IO_URING("io_uring", IoUringServerSocketChannel.class, IoUringSocketChannel.class),
    NIO("nio", NioServerSocketChannel.class, NioSocketChannel.class);

    private final String label;
    private final Class<? extends ServerChannel> serverChannel;
    private final Class<? extends SocketChannel> socketChannel;

    Transport(String label, Class<? extends ServerChannel> serverChannel, Class<? extends SocketChannel> socketChannel) {
        this.label = label;
        this.serverChannel = serverChannel;
        this.socketChannel = socketChannel;
    }

    /** Resolves the configured type; a native type that cannot load here is a config error. */
    public static Transport select(TransportConfig config) {
        return switch (config.type()) {
            case "epoll" -> {
                if (!Epoll.isAvailable()) {
                    throw new ConfigException("$.transport.type", "epoll",
                            "a transport available here (epoll: " + Epoll.unavailabilityCause() + ")");
                }
                yield EPOLL;
            }
            case "io_uring" -> {
                if (!IoUring.isAvailable()) {
                    throw new ConfigException("$.transport.type", "io_uring",
                            "a transport available here (io_uring: " + IoUring.unavailabilityCause() + ")");
                }
                yield IO_URING;
            }
            case "nio" -> NIO; // with reuse_port: rejected by TransportConfig
            default -> Epoll.isAvailable() ? EPOLL : NIO;
        };
    }

    public String label() {
        return label;
    }

    public Class<? extends ServerChannel> serverChannel() {
        return serverChannel;
    }

    public Class<? extends SocketChannel> socketChannel() {
        return socketChannel;
    }

    /** The option that lets several listening sockets share a port (SO_REUSEPORT), or null (NIO). */
    public ChannelOption<Boolean> reusePortOption() {
        return switch (this) {
            case EPOLL -> EpollChannelOption.SO_REUSEPORT;
            case IO_URING -> IoUringChannelOption.SO_REUSEPORT;
            case NIO -> null;
        };
    }

    private IoHandlerFactory ioHandlerFactory() {
        return switch (this) {
            case EPOLL -> EpollIoHandler.newFactory();
            case IO_URING -> IoUringIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
        };
    }

    /**
     * The template of upstream connections opened from {@code loop}: TCP_NODELAY, SO_KEEPALIVE,
     * pooled buffers. Callers clone it and add a handler (and a connect timeout).
     */
    public Bootstrap upstreamBootstrap(EventLoop loop) {
        return new Bootstrap()
                .group(loop)
                .channel(socketChannel)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.ALLOCATOR, allocator());
    }

    /** The buffer allocator of every data-path channel. */
    public static ByteBufAllocator allocator() {
        return PooledByteBufAllocator.DEFAULT;
    }

    /** The number of worker event loops {@code config} asks for: {@code worker_threads}, or one per core when 0. */
    public static int workerThreads(TransportConfig config) {
        return config.workerThreads() > 0 ? config.workerThreads() : Runtime.getRuntime().availableProcessors();
    }

    /** A new group of {@code threads} event loops whose threads are named {@code prefix-N}. */
    public EventLoopGroup newGroup(int threads, String prefix) {
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(prefix, true), ioHandlerFactory());
    }
}
