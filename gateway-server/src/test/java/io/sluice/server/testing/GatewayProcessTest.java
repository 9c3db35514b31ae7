package io.sluice.server.testing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The leak check every forked gateway gets (the forks themselves run in JarIT and ConfigWatchIT). */
class GatewayProcessTest {

    @Test
    void forkedGatewaysHuntLeaksAtParanoid() {
        assertThat(GatewayProcess.JVM_ARGS).contains("-Dio.netty.leakDetection.level=PARANOID");
    }

    @Test
    void outputWithALeakReportFailsQuotingIt() {
        String out = "sluice 0.1.0\nNov 24 SEVERE io.netty.util.ResourceLeakDetector - LEAK: ByteBuf.release() was not called\n"
                + "Recent access records:\n#1: io.sluice.server.http.HttpProxyHandler.channelRead\n";
        assertThatThrownBy(() -> GatewayProcess.assertNoLeaks(out)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("reported a ByteBuf leak").hasMessageContaining("SEVERE io.netty.util.ResourceLeakDetector - LEAK:")
                .hasMessageContaining("HttpProxyHandler.channelRead").hasMessageNotContaining("sluice 0.1.0");
    }

    @Test
    void cleanOutputPasses() {
        GatewayProcess.assertNoLeaks("sluice 0.1.0\nlistener web http://127.0.0.1:1234\nstopped\n");
    }
}
