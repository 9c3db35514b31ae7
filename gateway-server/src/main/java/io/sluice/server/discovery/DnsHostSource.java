package io.sluice.server.discovery;

import io.netty.channel.EventLoop;
import io.netty.channel.socket.DatagramChannel;
import io.netty.handler.codec.dns.DefaultDnsQuestion;
import io.netty.handler.codec.dns.DnsRawRecord;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.resolver.ResolvedAddressTypes;
import io.netty.resolver.dns.DnsErrorCauseException;
import io.netty.resolver.dns.DnsNameResolver;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.resolver.dns.NoopDnsCache;
import io.netty.resolver.dns.SingletonDnsServerAddressStreamProvider;
import io.netty.util.concurrent.Future;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Envoy's STRICT_DNS as a {@link HostSource}: every A and AAAA record of a name is a host (with the
 * configured port), asked asynchronously on one of the gateway's event loops with Netty's resolver
 * (no cache, no hosts file, no search domains: discovery must see the answer of the server), and
 * re-resolved when the shortest TTL of the answer has passed, bounded to [refresh_min, refresh_max].
 * On failure (timeout, SERVFAIL, REFUSED, I/O) the hosts are kept and the query is retried after
 * refresh_min, doubling up to refresh_max. NXDOMAIN or no record of either type publishes an empty
 * list, which the cluster's {@code allow_empty} decides about (default: keep the last hosts).
 * DNS gives no start time: a new address warms up from when this gateway first saw it.
 *
 * <p>Timing runs on the injected {@link Scheduler} (a fake clock in tests); queries on the event loop.
 */
public final class DnsHostSource implements HostSource {

    private final DiscoveryConfig config;
    private final String name;
    private final int port;
    private final EventLoop loop;
    private final Class<? extends DatagramChannel> channelType;
    private final Scheduler scheduler;
    private volatile Sink sink;
    private volatile DnsNameResolver resolver;
    /** Event-loop confined. */
    private Cancellable next = Cancellable.NOOP;
    private long failureDelayNanos;
    private boolean failing;
    private boolean started;
    private volatile boolean closed;

    public DnsHostSource(DiscoveryConfig config, EventLoop loop, Class<? extends DatagramChannel> channelType, Scheduler scheduler) {
        this.config = config;
        HostConfig target = HostConfig.parse(config.address(), 1);
        String n = target.host();
        this.name = n.endsWith(".") ? n : n + ".";
        this.port = target.port();
        this.loop = loop;
        this.channelType = channelType;
        this.scheduler = scheduler;
    }

    @Override
    public void start(Sink s) {
        this.sink = s;
        DnsNameResolverBuilder b = new DnsNameResolverBuilder(loop)
                .datagramChannelType(channelType)
                .resolveCache(NoopDnsCache.INSTANCE)
                .hostsFileEntriesResolver((inetHost, types) -> null) // never /etc/hosts: discovery asks the server
                .searchDomains(List.of())
                .ndots(1)
                .resolvedAddressTypes(ResolvedAddressTypes.IPV4_PREFERRED)
                .queryTimeoutMillis(config.connectionTimeout().toMillis());
        if (config.dnsServer() != null) {
            HostConfig server = HostConfig.parse(config.dnsServer(), 1);
            b.nameServerProvider(new SingletonDnsServerAddressStreamProvider(new InetSocketAddress(server.host(), server.port())));
        }
        resolver = b.build();
        loop.execute(this::resolve);
    }

    /** Asks for A, then AAAA; publishes their union. Event loop. */
    private void resolve() {
        if (closed) {
            return;
        }
        List<InetAddress> found = new ArrayList<>();
        long[] minTtl = {Long.MAX_VALUE};
        query(DnsRecordType.A, found, minTtl).addListener(a -> {
            Throwable errA = a.cause();
            query(DnsRecordType.AAAA, found, minTtl).addListener(aaaa -> finished(found, minTtl[0], errA, aaaa.cause()));
        });
    }

    private Future<List<DnsRecord>> query(DnsRecordType type, List<InetAddress> into, long[] minTtl) {
        return resolver.resolveAll(new DefaultDnsQuestion(name, type)).addListener(f -> {
            if (!f.isSuccess()) {
                return;
            }
            @SuppressWarnings("unchecked")
            List<DnsRecord> records = (List<DnsRecord>) f.getNow();
            for (DnsRecord r : records) {
                try {
                    if (r instanceof DnsRawRecord raw && (r.type() == DnsRecordType.A || r.type() == DnsRecordType.AAAA)) {
                        byte[] ip = new byte[raw.content().readableBytes()];
                        raw.content().getBytes(raw.content().readerIndex(), ip);
                        into.add(InetAddress.getByAddress(ip));
                        minTtl[0] = Math.min(minTtl[0], r.timeToLive());
                    }
                } catch (UnknownHostException e) {
                    // a record of the wrong length: skipped
                } finally {
                    io.netty.util.ReferenceCountUtil.release(r);
                }
            }
        });
    }

    private void finished(List<InetAddress> found, long minTtl, Throwable errA, Throwable errAaaa) {
        if (closed) {
            return;
        }
        boolean failed = !found.isEmpty() ? false : (isFailure(errA) || isFailure(errAaaa));
        if (failed) {
            Throwable cause = isFailure(errA) ? errA : errAaaa;
            failureDelayNanos = failureDelayNanos == 0 ? config.refreshMin().toNanos()
                    : Math.min(config.refreshMax().toNanos(), failureDelayNanos * 2);
            if (!failing || !started) {
                failing = true;
                sink.state("failing (" + describe(cause) + ")", false);
            }
            schedule(failureDelayNanos);
            return;
        }
        failureDelayNanos = 0;
        if (failing || !started) {
            failing = false;
            sink.state("resolving " + name + " via " + (config.dnsServer() == null ? "the system resolver" : config.dnsServer()), true);
        }
        started = true;
        Set<String> seen = new LinkedHashSet<>();
        List<DiscoveredHost> hosts = new ArrayList<>();
        for (InetAddress a : found) {
            if (seen.add(a.getHostAddress())) {
                hosts.add(new DiscoveredHost(a.getHostAddress(), port, 1, 0, "dns"));
            }
        }
        sink.hosts(hosts);
        long ttlNanos = minTtl == Long.MAX_VALUE ? config.refreshMax().toNanos() : TimeUnit.SECONDS.toNanos(minTtl);
        schedule(Math.max(config.refreshMin().toNanos(), Math.min(config.refreshMax().toNanos(), ttlNanos)));
    }

    /** A failure that keeps the hosts: anything but "the name or this record type does not exist". */
    private static boolean isFailure(Throwable t) {
        if (t == null) {
            return false;
        }
        if (t instanceof UnknownHostException) {
            Throwable c = t.getCause();
            if (c instanceof DnsErrorCauseException dns) {
                return dns.getCode() != DnsResponseCode.NXDOMAIN;
            }
            return c != null; // no cause: NODATA / no such record
        }
        return true;
    }

    private static String describe(Throwable t) {
        Throwable c = t.getCause() != null ? t.getCause() : t;
        if (c instanceof DnsErrorCauseException dns) {
            return dns.getCode().toString();
        }
        return c.getClass().getSimpleName();
    }

    private void schedule(long delayNanos) {
        next.cancel();
        next = scheduler.schedule(() -> loop.execute(this::resolve), delayNanos);
    }

    @Override
    public void close() {
        closed = true;
        loop.execute(() -> {
            next.cancel();
            DnsNameResolver r = resolver;
            if (r != null) {
                r.close();
            }
        });
    }

    /** The datagram channel class of a transport's event loops. */
    public static Class<? extends DatagramChannel> datagramChannel(io.sluice.server.transport.Transport transport) {
        return switch (transport) {
            case EPOLL -> io.netty.channel.epoll.EpollDatagramChannel.class;
            case IO_URING -> io.netty.channel.uring.IoUringDatagramChannel.class;
            case NIO -> io.netty.channel.socket.nio.NioDatagramChannel.class;
        };
    }

    @Override
    public String toString() {
        return "dns " + name + " port " + port;
    }
}
