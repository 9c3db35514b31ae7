package io.sluice.core.config;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RouteMatchTest {

    @Test
    void hostsMatchExactlyOrBySuffix() {
        RouteMatch m = new RouteMatch(List.of("api.example.com", "*.internal"), null, null, null, null, null);
        assertThat(m.matchesHost("api.example.com")).isTrue();
        assertThat(m.matchesHost("a.b.internal")).isTrue();
        assertThat(m.matchesHost("internal")).isFalse();
        assertThat(m.matchesHost("example.com")).isFalse();
        assertThat(RouteMatch.ANY.matchesHost("anything")).isTrue();
    }

    @Test
    void stringMatchKinds() {
        assertThat(StringMatch.exact("/a").matches("/a")).isTrue();
        assertThat(StringMatch.exact("/a").matches("/ab")).isFalse();
        assertThat(StringMatch.prefix("/api/").matches("/api/users")).isTrue();
        assertThat(StringMatch.prefix("/api/").matches("/apx")).isFalse();
        assertThat(StringMatch.regex("/users/\\d+").matches("/users/42")).isTrue();
        assertThat(StringMatch.regex("/users/\\d+").matches("/users/42/x")).isFalse();
        assertThatThrownBy(() -> StringMatch.regex("(")).isInstanceOf(ConfigException.class).hasMessageContaining("regex");
    }

    @Test
    void badHostPatternsAreRejected() {
        assertThatThrownBy(() -> new RouteMatch(List.of("a.*.com"), null, null, null, null, null))
                .hasMessageContaining("hosts[0]");
    }
}
