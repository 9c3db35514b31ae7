package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;

import java.util.Arrays;

/**
 * Maglev consistent hashing: a lookup table of prime size {@code M} (default 65537) filled by the
 * hosts in turns, each along its own permutation {@code (offset + k × skip) mod M} (offset and skip
 * from two hashes of its address), a host with weight {@code w} taking a turn {@code w / maxWeight}
 * as often as the heaviest (Envoy's weighted variant). A key goes to {@code table[key mod M]}: one
 * array read. Each host owns close to its share of the slots, and a host joining or leaving changes
 * little more than the slots it gains or loses.
 */
final class MaglevPicker extends HashPicker {

    private final int[] table;

    MaglevPicker(Host[] hosts, double[] base, int size, SlowStartConfig slowStart, Ticker ticker,
                 ThreadRandom random) {
        super(hosts, slowStart, ticker, random);
        int n = hosts.length;
        if (n == 0) {
            table = new int[0];
            return;
        }
        int[] t = new int[size];
        Arrays.fill(t, -1);
        long[] offset = new long[n];
        long[] skip = new long[n];
        long[] next = new long[n];
        double[] target = new double[n];
        double max = 0;
        for (double w : base) {
            max = Math.max(max, w);
        }
        double[] norm = new double[n];
        for (int i = 0; i < n; i++) {
            String a = hosts[i].address();
            offset[i] = Long.remainderUnsigned(Hashing.hash(a), size);
            skip[i] = Long.remainderUnsigned(Hashing.hash(a + "#skip"), size - 1) + 1;
            norm[i] = base[i] / max;
        }
        int filled = 0;
        for (long round = 0; filled < size; round++) {
            for (int i = 0; i < n && filled < size; i++) {
                if (norm[i] * round < target[i]) {
                    continue;
                }
                target[i] += 1.0;
                int c = (int) ((offset[i] + skip[i] * next[i]) % size);
                while (t[c] >= 0) {
                    next[i]++;
                    c = (int) ((offset[i] + skip[i] * next[i]) % size);
                }
                t[c] = i;
                next[i]++;
                filled++;
            }
        }
        table = t;
    }

    @Override
    int slot(long key) {
        return (int) Long.remainderUnsigned(key, table.length);
    }

    @Override
    int slots() {
        return table.length;
    }

    @Override
    int hostAt(int s) {
        return table[s];
    }
}
