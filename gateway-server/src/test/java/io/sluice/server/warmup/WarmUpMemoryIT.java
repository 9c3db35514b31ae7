package io.sluice.server.warmup;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocatorMetric;
import io.netty.util.internal.PlatformDependent;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.time.Ticker;
import io.sluice.server.transport.Transport;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The warm-up gives back what it allocated (docs/perf/2026-11-25-footprint.md): after it, Netty holds
 * no more direct memory than before except the shared pool's chunks its event loops used (the ones
 * the real event loops take next), no buffer of the shared pool is still in use, no thread cache of a
 * warm-up thread is left, and the synthetic peers' own pool is unreachable (its chunks freed).
 */
class WarmUpMemoryIT {

    @Test
    void warmUpReleasesWhatItAllocated() {
        PooledByteBufAllocator shared = (PooledByteBufAllocator) Transport.allocator(); // the pool every gateway channel uses
        PooledByteBufAllocatorMetric metric = shared.metric();
        assertThat(PlatformDependent.usedDirectMemory()).as("Netty counts its direct memory in this JVM").isGreaterThanOrEqualTo(0);
        // the first one also initialises classes, some with constant direct buffers (a few bytes): measure the second
        WarmUp.Released first = warmUp();
        assertThat(first.allocations()).as("the synthetic peers took their buffers from their own pool")
                .isPositive();
        long direct0 = PlatformDependent.usedDirectMemory();
        long pooled0 = metric.usedDirectMemory();
        long pinned0 = shared.pinnedDirectMemory();
        int caches0 = metric.numThreadLocalCaches();

        WarmUp.Released second = warmUp();

        assertThat(second.allocations()).isPositive();
        assertThat(second.pool().refersTo(null)).as("the peers' pool is unreachable after the warm-up").isTrue();
        // "at most": a thread left by an earlier test in this JVM may end (and free) meanwhile; only growth is the warm-up's
        assertThat(shared.pinnedDirectMemory()).as("shared pool: bytes in live buffers").isLessThanOrEqualTo(pinned0);
        assertThat(metric.numThreadLocalCaches()).as("shared pool: thread caches").isLessThanOrEqualTo(caches0);
        long pooledGrowth = metric.usedDirectMemory() - pooled0;
        assertThat(pooledGrowth).as("shared pool: at most one chunk per warm-up event loop")
                .isLessThanOrEqualTo((long) metric.chunkSize() * WarmUp.MAX_WORKERS);
        assertThat(PlatformDependent.usedDirectMemory() - direct0)
                .as("Netty's direct memory grew by the shared pool's chunks only (nothing kept by another pool)")
                .isLessThanOrEqualTo(pooledGrowth);
    }

    /** A warm-up of two rounds on the ticker; returns what its release step saw. */
    private static WarmUp.Released warmUp() {
        AtomicReference<WarmUp.Released> peers = new AtomicReference<>();
        AtomicLong now = new AtomicLong();
        Ticker ticker = now::get;
        WarmUp.releaseObserver = peers::set;
        WarmUp.Result r;
        try {
            // only its transport is read: the defaults (epoll where it loads, one event loop per core)
            List<HostConfig> unused = List.of(new HostConfig("127.0.0.1", 1, 1));
            GatewayConfig real = WarmUp.syntheticConfig(unused, unused, TransportConfig.defaults());
            r = WarmUp.run(real, new WarmUpConfig(true, Duration.ofSeconds(3)), ticker, round -> {
                if (round == 2) {
                    now.addAndGet(Duration.ofSeconds(3).toNanos());
                }
            });
        } finally {
            WarmUp.releaseObserver = null;
        }
        assertThat(r.failure()).isNull();
        assertThat(r.rounds()).isEqualTo(2);
        assertThat(r.httpRequests()).isGreaterThan(0);
        assertThat(r.boltRequests()).isGreaterThan(0);
        assertThat(peers.get()).as("the peers' pool was released").isNotNull();
        return peers.get();
    }
}
