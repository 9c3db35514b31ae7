package io.sluice.server.http.rules;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class TraceContextTest {

    static final String VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void continuesAValidTraceWithANewSpanAndTheSampledFlag() {
        SplittableRandom rnd = new SplittableRandom(1);
        String next = TraceContext.next(VALID, rnd);
        assertThat(next).startsWith("00-4bf92f3577b34da6a3ce929d0e0e4736-").endsWith("-01").hasSize(55)
                .doesNotContain("00f067aa0ba902b7");
        assertThat(TraceContext.valid(next)).isTrue();
        assertThat(TraceContext.next(VALID.replace("-01", "-00"), rnd)).endsWith("-00");
        // only the sampled bit of unknown flags is kept
        assertThat(TraceContext.next(VALID.replace("-01", "-ff"), rnd)).endsWith("-01");
        // a later version in the 00 layout, with more fields, is continued as 00
        assertThat(TraceContext.next("01" + VALID.substring(2) + "-extra", rnd)).startsWith("00-4bf92f35");
    }

    @Test
    void replacesGarbageWithoutThrowing() {
        SplittableRandom rnd = new SplittableRandom(2);
        String[] garbage = {null, "", "00", "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // version ff
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // zero trace id
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // zero span id
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", // upper case
                VALID + "-x", // version 00 with extra fields
                VALID.replace('-', '_'), VALID.substring(0, 54), "\u0000".repeat(55), "🙂".repeat(30)};
        for (String g : garbage) {
            assertThat(TraceContext.valid(g)).as(String.valueOf(g)).isFalse();
            String next = TraceContext.next(g, rnd);
            assertThat(TraceContext.valid(next)).isTrue();
            assertThat(next).endsWith("-01");
        }
        SplittableRandom fuzz = new SplittableRandom(3);
        for (int i = 0; i < 20_000; i++) {
            char[] c = VALID.toCharArray();
            int edits = 1 + fuzz.nextInt(3);
            for (int e = 0; e < edits; e++) {
                c[fuzz.nextInt(c.length)] = (char) fuzz.nextInt(128);
            }
            String s = new String(c, 0, fuzz.nextInt(c.length + 1));
            assertThat(TraceContext.valid(TraceContext.next(s, rnd))).isTrue();
        }
    }

    @Test
    void requestIdsAreVersion4UuidsAndClientIdsAreChecked() {
        SplittableRandom rnd = new SplittableRandom(4);
        for (int i = 0; i < 1000; i++) {
            assertThat(RequestIds.next(rnd)).matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
        }
        assertThat(RequestIds.usable("abc-123")).isTrue();
        assertThat(RequestIds.usable("")).isFalse();
        assertThat(RequestIds.usable("a b")).isFalse();
        assertThat(RequestIds.usable("x".repeat(129))).isFalse();
        assertThat(RequestIds.usable(null)).isFalse();
    }
}
