package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;

/**
 * What {@link RingHashPicker} and {@link MaglevPicker} share: a request's key chooses a start slot
 * in an immutable table built once per host set (off the hot path, published through the
 * balancer's volatile picker); the pick walks on from that slot past hosts that cannot take it.
 *
 * <p>A host can take a key when it is available (or the cluster panics) and, while it warms up
 * (slow start), when the key passes its warm-up check: {@code u(key, host) < factor}, with
 * {@code u} a uniform number in [0, 1) derived from the key and the host and {@code factor} the
 * slow-start factor now. So a warming host receives the share {@code factor} of its keys, growing
 * with the factor, and each key it accepts it keeps: keys move to a new host gradually and only
 * once. A key without a value (no header, no cookie) gets a random start slot.
 */
abstract class HashPicker implements Picker {

    /** Most slots walked before falling back to a scan (all hosts unavailable is the only way to get there). */
    private static final int MAX_WALK = 4096;

    final Host[] hosts;
    private final long[] salts;
    private final SlowStartConfig slowStart;
    private final Ticker ticker;
    private final ThreadRandom random;

    HashPicker(Host[] hosts, SlowStartConfig slowStart, Ticker ticker, ThreadRandom random) {
        this.hosts = hosts;
        this.slowStart = slowStart != null && slowStart.enabled() ? slowStart : null;
        this.ticker = ticker;
        this.random = random;
        this.salts = new long[hosts.length];
        for (int i = 0; i < hosts.length; i++) {
            salts[i] = Hashing.hash(hosts[i].address());
        }
    }

    /** The slot where key {@code key} starts. */
    abstract int slot(long key);

    /** The number of slots. */
    abstract int slots();

    /** The host index in slot {@code s}. */
    abstract int hostAt(int s);

    @Override
    public Host pick(boolean panic) {
        return pick(panic, random.get().nextLong() | 1);
    }

    @Override
    public Host pick(boolean panic, long key) {
        int n = slots();
        if (n == 0) {
            return null;
        }
        int s = slot(key);
        int walk = Math.min(n, MAX_WALK);
        for (int t = 0; t < walk; t++) {
            int i = hostAt(s);
            Host h = hosts[i];
            if ((panic || h.available()) && warm(h, i, key)) {
                return h;
            }
            if (++s == n) {
                s = 0;
            }
        }
        if (panic) {
            return hosts[hostAt(slot(key))];
        }
        return Picker.firstAvailable(hosts, (int) (key >>> 33));
    }

    /** The warm-up check: true unless {@code h} is warming and {@code key} falls beyond its current factor. */
    private boolean warm(Host h, int i, long key) {
        if (slowStart == null) {
            return true;
        }
        long t0 = h.warmStartNanos();
        if (t0 == Host.NOT_WARMING) {
            return true;
        }
        double f = Weights.slowStartFactor(slowStart, h.warmUp(), t0, ticker.nanoTime());
        double u = (Hashing.mix(key ^ salts[i]) >>> 11) * 0x1.0p-53;
        return u < f;
    }
}
