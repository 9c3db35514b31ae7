package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.HashLbConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;

import java.util.Arrays;

/**
 * Consistent hashing on a ring (ketama style): each host owns points {@code hash(address + "_" + k)}
 * on a 64-bit ring, as many as its share of the ring size; a key goes to the first point at or after
 * its hash (wrapping). Adding a host to {@code n} takes about {@code 1/(n+1)} of the keys, all of them
 * to the new host; removing one moves only its keys.
 *
 * <p>Ring size: each unit of (clamped) weight gets {@code min_ring_size} points, so the ring holds
 * at least {@code min_ring_size} points and a host's points — a prefix of its own sequence — do not
 * depend on the other hosts: a host joining or leaving moves only its own keys, on every gateway
 * alike (the ring depends on the host set only, not on history). Only when {@code total weight ×
 * min_ring_size} would pass {@code max_ring_size} does the per-unit count shrink to fit (and more
 * keys move when the host set changes).
 * The ring is two parallel arrays sorted by point (43 significant bits); a lookup is a binary search.
 */
final class RingHashPicker extends HashPicker {

    private static final long OWNER_MASK = EdfScheduler.MAX_ENTRIES - 1;

    private final long[] points;
    private final int[] owners;

    RingHashPicker(Host[] hosts, double[] base, HashLbConfig cfg, SlowStartConfig slowStart, Ticker ticker,
                   ThreadRandom random) {
        super(hosts, slowStart, ticker, random);
        int n = hosts.length;
        double sum = 0;
        double min = Double.MAX_VALUE; // lightest weight: it still gets a point
        for (double w : base) {
            sum += w;
            min = Math.min(min, w);
        }
        if (n == 0) {
            points = new long[0];
            owners = new int[0];
            return;
        }
        // points per unit of weight: min_ring_size, whatever the other hosts — so a host's points (a prefix
        // of its own sequence) do not change when others join or leave — unless the ring would pass
        // max_ring_size, where the unit shrinks to fit
        double perUnit = Math.min(cfg.minRingSize(), Math.floor(cfg.maxRingSize() / sum));
        perUnit = Math.max(perUnit, 1.0 / min);
        long[][] byHost = new long[n][];
        long placed = 0;
        for (int i = 0; i < n; i++) {
            long count = Math.max(1, Math.round(base[i] * perUnit));
            placed += count;
            byHost[i] = new long[(int) count];
            String a = hosts[i].address() + "_";
            for (int k = 0; k < count; k++) {
                byHost[i][k] = Hashing.hash(a + k);
            }
        }
        // a point keeps its high 43 bits; the low 21 carry the owner, so one primitive sort orders both
        int total = (int) placed;
        long[] packed = new long[total];
        int p = 0;
        for (int i = 0; i < n; i++) {
            for (long pt : byHost[i]) {
                packed[p++] = (pt & ~OWNER_MASK) | i;
            }
        }
        Arrays.sort(packed);
        int[] own = new int[total];
        for (int k = 0; k < total; k++) {
            own[k] = (int) (packed[k] & OWNER_MASK);
            packed[k] &= ~OWNER_MASK;
        }
        points = packed;
        owners = own;
    }

    @Override
    int slot(long key) {
        int s = Arrays.binarySearch(points, key);
        if (s < 0) {
            s = -s - 1;
        }
        return s == points.length ? 0 : s;
    }

    @Override
    int slots() {
        return points.length;
    }

    @Override
    int hostAt(int s) {
        return owners[s];
    }
}
