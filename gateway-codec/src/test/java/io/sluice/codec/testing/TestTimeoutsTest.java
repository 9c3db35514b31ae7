package io.sluice.codec.testing;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The default timeout of junit-platform.properties, with its thread mode, ends a hung test: sample
 * classes run through the launcher with the same properties but a 300 ms default.
 */
class TestTimeoutsTest {

    static final AtomicBoolean INTERRUPTED = new AtomicBoolean();

    @Test
    void aTestWaitingForeverFailsAtTheDeadlineAndIsInterrupted() {
        INTERRUPTED.set(false);
        long t0 = System.nanoTime();
        TestExecutionSummary s = run(WaitsForever.class);
        assertThat(s.getTestsFailedCount()).isOne();
        assertThat(s.getFailures().get(0).getException()).hasMessageContaining("timed out after 300 milliseconds");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
        assertThat(INTERRUPTED).as("the test thread was interrupted").isTrue();
    }

    @Test
    @Timeout(20) // were the mode SAME_THREAD, the sample would hang: this fails instead
    void aTestBlockedInASocketReadWithoutTimeoutFailsAtTheDeadlineToo() throws IOException {
        long t0 = System.nanoTime();
        TestExecutionSummary s = run(ReadsASilentSocket.class);
        ReadsASilentSocket.socket.close(); // ends the abandoned read
        assertThat(s.getTestsFailedCount()).isOne();
        assertThat(s.getFailures().get(0).getException()).hasMessageContaining("timed out after 300 milliseconds");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
    }

    private static TestExecutionSummary run(Class<?> sample) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectClass(sample))
                .configurationParameter("junit.jupiter.execution.timeout.default", "300 ms").build();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, listener);
        return listener.getSummary();
    }

    static class WaitsForever {
        @Test
        void waits() {
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                INTERRUPTED.set(true);
            }
        }
    }

    static class ReadsASilentSocket {
        static volatile Socket socket;

        @Test
        void reads() throws IOException {
            try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                 Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                socket = s;
                s.getInputStream().read(); // no SO_TIMEOUT, and a socket read ignores interrupts
            }
        }
    }
}
