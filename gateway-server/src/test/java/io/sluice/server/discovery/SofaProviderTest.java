package io.sluice.server.discovery;

import org.junit.jupiter.api.Test;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Parsing SOFARPC provider nodes and service headers the way SOFARPC's own consumer does. */
class SofaProviderTest {

    /** The child a real sofa-rpc 5.13.2 provider registered (docs/discovery.md), host transposed to 127.0.0.1. */
    private static final String OBSERVED = "bolt%3A%2F%2F127.0.0.1%3A12200%3Fversion%3D1.0%26accepts%3D100000%26appName"
            + "%3Decho-app%26weight%3D100%26language%3Djava%26pid%3D20626%26interface%3Dcom.example.EchoService%26timeout"
            + "%3D0%26serialization%3Dhessian2%26protocol%3Dbolt%26delay%3D-1%26warmupWeight%3D10%26dynamic%3Dtrue"
            + "%26startTime%3D1795544939528%26warmupTime%3D60000%26id%3Drpc-cfg-0%26uniqueId%3D%26rpcVer%3D51302";

    @Test
    void parsesTheChildARealProviderRegisters() {
        SofaProvider p = SofaProvider.parse(OBSERVED);
        assertThat(p.protocol()).isEqualTo("bolt");
        assertThat(p.host()).isEqualTo("127.0.0.1");
        assertThat(p.port()).isEqualTo(12200);
        assertThat(p.weight()).isEqualTo(100);
        assertThat(p.startTime()).isEqualTo(1795544939528L);
        assertThat(p.warmupTime()).isEqualTo(60000);
        assertThat(p.warmupWeight()).isEqualTo(10);
        assertThat(SofaProvider.parse("bolt://h:1?weight=5").warmupWeight()).isEqualTo(-1);
        assertThat(SofaProvider.parse("bolt://h:1?warmupWeight=x").warmupWeight()).isEqualTo(-1);
        assertThat(p.uniqueId()).isEmpty();
        assertThat(p.matches(SofaService.parse("com.example.EchoService:1.0"), "bolt")).isTrue();
        assertThat(p.matches(SofaService.parse("com.example.EchoService:2.0"), "bolt")).isTrue(); // version is not registered
        assertThat(p.matches(SofaService.parse("com.example.EchoService:1.0:u1"), "bolt")).isFalse();
        assertThat(p.matches(SofaService.parse("com.example.EchoService:1.0"), "tr")).isFalse();
    }

    @Test
    void weightsFollowSofaRpcFallbacks() {
        assertThat(parse("bolt://h:1?weight=2000").weight()).isEqualTo(2000);
        assertThat(parse("bolt://h:1?weight=x").weight()).isEqualTo(100);
        assertThat(parse("bolt://h:1?a=b").weight()).isEqualTo(100);
        assertThat(parse("bolt://h:1?weight=-5").weight()).isZero();
        assertThat(parse("bolt://h:1?weight=100&disabled=true").weight()).isZero();
        assertThat(parse("bolt://h:1?startTime=abc").startTime()).isZero();
        assertThat(parse("h:1?uniqueId=a:b,c").protocol()).isEqualTo("bolt");
        assertThat(parse("bolt://h:1/ctx?uniqueId=a:b,c").uniqueId()).isEqualTo("a:b,c");
        assertThat(parse("bolt://h:1?x=1").uniqueId()).isNull(); // no uniqueId: invisible to every consumer
    }

    @Test
    void badChildrenAreRejected() {
        assertThatThrownBy(() -> parse("bolt://h?weight=1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> parse("bolt://h:0?weight=1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> parse("bolt://h:1?weight")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> parse("bolt://[::1]:1?weight=1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SofaProvider.parse("bolt%3A%2F%2Fh%3A1%3Fa%3D%ZZ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void serviceHeaders() {
        SofaService s = SofaService.parse("com.example.EchoService:2.0:u1:x");
        assertThat(s.interfaceId()).isEqualTo("com.example.EchoService");
        assertThat(s.version()).isEqualTo("2.0");
        assertThat(s.uniqueId()).isEqualTo("u1:x");
        assertThat(s.providersPath("/team1/")).isEqualTo("/team1/sofa-rpc/com.example.EchoService/providers");
        assertThat(SofaService.parse("a.B:1.0").uniqueId()).isEmpty();
        assertThatThrownBy(() -> SofaService.parse("nocolon")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SofaService.parse("a/b:1.0")).isInstanceOf(IllegalArgumentException.class);
    }

    private static SofaProvider parse(String url) {
        return SofaProvider.parse(URLEncoder.encode(url, StandardCharsets.UTF_8));
    }
}
