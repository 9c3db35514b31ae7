package io.sluice.server.bolt;

/**
 * The requests in flight on one upstream connection, without per-request allocation or timers:
 * <ul>
 *   <li>ids: fresh ids come from a counter; an entry lives in slot {@code id & mask} of a
 *       power-of-two array kept at most half full (ids still pending after the counter wraps are
 *       skipped), so lookups are one array read and an id compare;</li>
 *   <li>deadlines: entries sharing a timeout are appended to one FIFO list, which is therefore
 *       ordered by deadline (start times only grow); up to {@link #SORTED_LISTS} distinct timeouts
 *       get such a list, any other goes to one unsorted list that is scanned. The earliest deadline
 *       is the minimum of a few list heads, so the connection needs one timer, not one per request;</li>
 *   <li>entries are recycled through a bounded free list.</li>
 * </ul>
 * Event loop only; no locks.
 */
final class PendingTable {

    /** Distinct timeouts that get a deadline-ordered list. */
    static final int SORTED_LISTS = 7;
    /** Recycled entries kept per connection. */
    static final int MAX_FREE = 1024;
    private static final int UNSORTED = SORTED_LISTS;

    private Pending[] slots;
    private int mask;
    private int size;
    private int nextId = 1;
    private final long[] listTimeout = new long[SORTED_LISTS];
    private final Pending[] heads = new Pending[SORTED_LISTS + 1];
    private final Pending[] tails = new Pending[SORTED_LISTS + 1];
    private int lists;
    private Pending free;
    private int freeCount;

    PendingTable(int initialCapacity) {
        int n = Integer.highestOneBit(Math.max(4, initialCapacity - 1)) << 1;
        slots = new Pending[n];
        mask = n - 1;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** A clean entry, recycled if one is available. */
    Pending obtain() {
        Pending p = free;
        if (p == null) {
            return new Pending();
        }
        free = p.next;
        p.next = null;
        freeCount--;
        return p;
    }

    /** Gives {@code p} (already removed, its owner told) back for reuse. */
    void recycle(Pending p) {
        p.clear();
        if (freeCount < MAX_FREE) {
            p.next = free;
            free = p;
            freeCount++;
        }
    }

    /** Registers {@code p} (its timeout and deadline set) under a fresh id, which it returns. */
    int add(Pending p) {
        if (size >= (slots.length >> 1)) {
            grow();
        }
        int id = nextFreeId();
        slots[id & mask] = p;
        p.upstreamId = id;
        size++;
        link(p);
        return id;
    }

    /** An id no pending request uses (for frames that are not tracked, e.g. heartbeats). */
    int nextFreeId() {
        int id;
        do {
            id = nextId++;
        } while (slots[id & mask] != null);
        return id;
    }

    /** The entry of {@code id}, or null. */
    Pending get(int id) {
        Pending p = slots[id & mask];
        return p != null && p.upstreamId == id ? p : null;
    }

    /** Removes and returns the entry of {@code id}, or null if none is pending under it. */
    Pending remove(int id) {
        int i = id & mask;
        Pending p = slots[i];
        if (p == null || p.upstreamId != id) {
            return null;
        }
        slots[i] = null;
        size--;
        unlink(p);
        return p;
    }

    /** The earliest deadline of all entries, or {@link Long#MAX_VALUE} when empty. */
    long earliestDeadline() {
        long min = Long.MAX_VALUE;
        boolean any = false;
        for (int i = 0; i < lists; i++) {
            Pending h = heads[i];
            if (h != null && (!any || h.deadlineNanos - min < 0)) {
                min = h.deadlineNanos;
                any = true;
            }
        }
        for (Pending p = heads[UNSORTED]; p != null; p = p.next) {
            if (!any || p.deadlineNanos - min < 0) {
                min = p.deadlineNanos;
                any = true;
            }
        }
        return min;
    }

    /** Removes and returns one entry whose deadline is at or before {@code now}, or null. */
    Pending pollExpired(long now) {
        for (int i = 0; i < lists; i++) {
            Pending h = heads[i];
            if (h != null && h.deadlineNanos - now <= 0) {
                return remove(h.upstreamId);
            }
        }
        for (Pending p = heads[UNSORTED]; p != null; p = p.next) {
            if (p.deadlineNanos - now <= 0) {
                return remove(p.upstreamId);
            }
        }
        return null;
    }

    /** Removes and returns any entry, or null when empty (to fail everything). */
    Pending pollAny() {
        for (int i = 0; i <= SORTED_LISTS; i++) {
            Pending h = heads[i];
            if (h != null) {
                return remove(h.upstreamId);
            }
        }
        return null;
    }

    private void link(Pending p) {
        int l = listFor(p.timeoutNanos);
        p.list = l;
        p.prev = tails[l];
        p.next = null;
        if (tails[l] == null) {
            heads[l] = p;
        } else {
            tails[l].next = p;
        }
        tails[l] = p;
    }

    private void unlink(Pending p) {
        int l = p.list;
        if (p.prev == null) {
            heads[l] = p.next;
        } else {
            p.prev.next = p.next;
        }
        if (p.next == null) {
            tails[l] = p.prev;
        } else {
            p.next.prev = p.prev;
        }
        p.prev = null;
        p.next = null;
        p.list = -1;
    }

    private int listFor(long timeout) {
        int emptyList = -1;
        for (int i = 0; i < lists; i++) {
            if (listTimeout[i] == timeout) {
                return i;
            }
            if (emptyList < 0 && heads[i] == null) {
                emptyList = i;
            }
        }
        if (lists < SORTED_LISTS) {
            listTimeout[lists] = timeout;
            return lists++;
        }
        if (emptyList >= 0) {
            listTimeout[emptyList] = timeout; // a timeout no longer in use gives its list away
            return emptyList;
        }
        return UNSORTED;
    }

    private void grow() {
        Pending[] old = slots;
        Pending[] bigger = new Pending[old.length << 1];
        int m = bigger.length - 1;
        for (Pending p : old) {
            if (p != null) {
                bigger[p.upstreamId & m] = p; // at most half full before: distinct live ids stay distinct
            }
        }
        slots = bigger;
        mask = m;
    }
}
