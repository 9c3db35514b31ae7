package io.sluice.bench.bolt;

import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.codec.bolt.BoltFraming;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SofaloadRequestTest {

    @Test
    void theRequestIsAV1FrameWithSofaloadsClassServiceAndTimeout() {
        byte[] bytes = SofaloadRequest.frame();
        // 22-byte v1 header, 44-byte class, 46-byte header map, Hessian2 body of about 1.3 KB
        assertThat(bytes.length).isBetween(1400, 1450);
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        byte[] copy = bytes.clone();
        copy[SofaloadRequest.ID_OFFSET + 3] = 42;
        ch.writeInbound(Bufs.copied(copy));
        BoltFrame f = ch.readInbound();
        try {
            assertThat(f.framing()).isEqualTo(BoltFraming.V1);
            assertThat(f.isRequest()).isTrue();
            assertThat(f.requestId()).isEqualTo(42);
            assertThat(f.timeoutMillis()).isEqualTo(5000);
            assertThat(f.codec()).isEqualTo(1);
            assertThat(f.className()).isEqualTo("com.alipay.sofa.rpc.core.request.SofaRequest");
            assertThat(f.classLength()).isEqualTo(44);
            assertThat(f.headerLength()).isEqualTo(46);
            assertThat(f.service()).isEqualTo("com.alipay.test.TestService:1.0");
        } finally {
            f.release();
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void optionsFollowSofaload() {
        BoltLoad.Options o = BoltLoad.parse(new String[] {"-D", "5", "--warm-up-time=1s", "-c", "8", "-m", "4", "-t", "2",
                "-p", "sofarpc", "sofarpc://127.0.0.1:12200"});
        assertThat(o.connections()).isEqualTo(8);
        assertThat(o.maxInFlight()).isEqualTo(4);
        assertThat(o.duration()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.warmUp()).isEqualTo(Duration.ofSeconds(1));
        assertThatThrownBy(() -> BoltLoad.parse(new String[] {"sofarpc://127.0.0.1"})).hasMessageContaining("with the port");
        assertThatThrownBy(() -> BoltLoad.parse(new String[] {"--qps", "10", "sofarpc://127.0.0.1:1"}))
                .hasMessageContaining("--qps needs -D");
        assertThat(BoltLoad.dur(812)).isEqualTo("812us");
        assertThat(BoltLoad.dur(36_900)).isEqualTo("36.90ms");
        assertThat(BoltLoad.dur(6_000_000)).isEqualTo("6.00s");
    }
}
