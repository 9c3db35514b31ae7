package io.sluice.server.policy.ratelimit;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The buckets of one keyed rule, bounded: at most {@code maxKeys} entries. Looking up a known key
 * is a lock-free {@link ConcurrentHashMap#get}; a new key beyond the cap evicts the least recently
 * used of a small sample (counted), and {@link #sweep} drops buckets that are idle and full (which
 * loses no state: a fresh bucket starts full). Safe from every event loop at once.
 */
final class KeyTable {

    /** Entries looked at to pick an eviction victim (sampled LRU, like Redis's allkeys-lru). */
    private static final int SAMPLE = 16;

    private final ConcurrentHashMap<Object, Limiter> buckets = new ConcurrentHashMap<>();
    private final int maxKeys;
    private final Factory factory;
    private final LongAdder evictions = new LongAdder();

    /** A new full bucket for {@code key} at ticker time {@code now}. */
    @FunctionalInterface
    interface Factory {
        Limiter create(Object key, long now);
    }

    KeyTable(int maxKeys, Factory factory) {
        this.maxKeys = maxKeys;
        this.factory = factory;
    }

    /** The bucket of {@code key}, created (evicting if full) when new. */
    Limiter bucket(Object key, long now) {
        Limiter b = buckets.get(key);
        if (b != null) {
            return b;
        }
        if (buckets.size() >= maxKeys) {
            evictOne();
        }
        Limiter fresh = factory.create(key, now);
        b = buckets.putIfAbsent(key, fresh);
        return b != null ? b : fresh;
    }

    private void evictOne() {
        Object victim = null;
        long oldest = Long.MAX_VALUE;
        long base = 0;
        int seen = 0;
        for (Iterator<Map.Entry<Object, Limiter>> it = buckets.entrySet().iterator(); it.hasNext() && seen < SAMPLE; seen++) {
            Map.Entry<Object, Limiter> e = it.next();
            long used = e.getValue().lastUsed();
            if (victim == null) {
                base = used;
            }
            if (victim == null || used - base < oldest) {
                oldest = used - base;
                victim = e.getKey();
            }
        }
        if (victim != null && buckets.remove(victim) != null) {
            evictions.increment();
        }
    }

    /** Drops the buckets unused since {@code idleBefore} that are full at {@code now}; returns how many. */
    int sweep(long now, long idleBefore) {
        int n = 0;
        for (Iterator<Limiter> it = buckets.values().iterator(); it.hasNext(); ) {
            if (it.next().idle(now, idleBefore)) {
                it.remove();
                n++;
            }
        }
        return n;
    }

    int size() {
        return buckets.size();
    }

    long evictions() {
        return evictions.sum();
    }
}
