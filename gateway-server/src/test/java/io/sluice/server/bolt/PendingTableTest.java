package io.sluice.server.bolt;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The upstream connection's table of requests in flight: ids, deadlines, recycling. */
class PendingTableTest {

    private static Pending entry(PendingTable t, long start, long timeout) {
        Pending p = t.obtain();
        BoltRequest r = new BoltRequest(null);
        r.startNanos = start;
        r.timeoutNanos = timeout;
        p.set(r, 7, null);
        return p;
    }

    @Test
    void idsAreFreshAndFoundUntilRemoved() {
        PendingTable t = new PendingTable(4);
        List<Pending> live = new ArrayList<>();
        Set<Integer> ids = new HashSet<>();
        for (int i = 0; i < 1000; i++) { // grows well past its initial capacity
            Pending p = entry(t, i, 1000);
            int id = t.add(p);
            assertThat(ids.add(id)).isTrue();
            live.add(p);
        }
        assertThat(t.size()).isEqualTo(1000);
        for (Pending p : live) {
            assertThat(t.get(p.upstreamId)).isSameAs(p);
        }
        Pending first = live.get(0);
        assertThat(t.remove(first.upstreamId)).isSameAs(first);
        assertThat(t.remove(first.upstreamId)).as("a response for an id no longer pending").isNull();
        assertThat(t.get(first.upstreamId + 4096)).as("an id sharing the slot").isNull();
        assertThat(t.size()).isEqualTo(999);
    }

    @Test
    void idsStillPendingAreSkippedWhenTheCounterComesRound() {
        PendingTable t = new PendingTable(8);
        Pending old = entry(t, 0, 1_000_000);
        int oldId = t.add(old); // stays pending while thousands of others come and go
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 5000; i++) {
            Pending p = entry(t, i, 10);
            int id = t.add(p);
            assertThat(id).isNotEqualTo(oldId);
            seen.add(id & 15);
            assertThat(t.remove(id)).isSameAs(p);
            t.recycle(p);
        }
        assertThat(seen).as("slots are reused").hasSizeGreaterThan(2);
        assertThat(t.get(oldId)).isSameAs(old);
        assertThat(t.nextFreeId()).isNotEqualTo(oldId);
    }

    @Test
    void expiryFollowsDeadlinesAcrossDifferentTimeouts() {
        PendingTable t = new PendingTable(16);
        Pending slowA = entry(t, 0, 5000);
        Pending fastB = entry(t, 10, 300);
        Pending slowC = entry(t, 20, 5000);
        Pending fastD = entry(t, 30, 300);
        for (Pending p : List.of(slowA, fastB, slowC, fastD)) {
            t.add(p);
        }
        assertThat(t.earliestDeadline()).isEqualTo(310);
        assertThat(t.pollExpired(309)).isNull();
        assertThat(t.pollExpired(330)).isSameAs(fastB);
        assertThat(t.pollExpired(330)).isSameAs(fastD);
        assertThat(t.pollExpired(330)).isNull();
        assertThat(t.earliestDeadline()).isEqualTo(5000);
        t.remove(slowA.upstreamId); // answered
        assertThat(t.earliestDeadline()).isEqualTo(5020);
        assertThat(t.pollExpired(6000)).isSameAs(slowC);
        assertThat(t.isEmpty()).isTrue();
        assertThat(t.earliestDeadline()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void manyDistinctTimeoutsStillExpireInTime() {
        PendingTable t = new PendingTable(16);
        List<Pending> all = new ArrayList<>();
        for (int i = 0; i < 20; i++) { // more distinct timeouts than sorted lists
            Pending p = entry(t, 0, 1000 - i * 10L);
            t.add(p);
            all.add(p);
        }
        assertThat(t.earliestDeadline()).isEqualTo(1000 - 19 * 10);
        List<Pending> expired = new ArrayList<>();
        Pending p;
        while ((p = t.pollExpired(900)) != null) {
            expired.add(p);
        }
        assertThat(expired).containsExactlyInAnyOrderElementsOf(all.subList(10, 20));
        while ((p = t.pollAny()) != null) {
            expired.add(p);
        }
        assertThat(expired).containsExactlyInAnyOrderElementsOf(all);
        assertThat(t.size()).isZero();
    }

    @Test
    void recycledEntriesComeBackClean() {
        PendingTable t = new PendingTable(4);
        Pending p = entry(t, 0, 10);
        p.target = "svc#m";
        t.add(p);
        t.remove(p.upstreamId);
        t.recycle(p);
        Pending again = t.obtain();
        assertThat(again).isSameAs(p);
        assertThat(again.owner).isNull();
        assertThat(again.target).isNull();
        assertThat(again.next).isNull();
        assertThat(t.obtain()).isNotSameAs(p);
    }
}
