package io.sluice.server.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The output of a child process (the gateway jar), line by line, read on a daemon thread: each line
 * goes to a queue for the test to wait on, and to a transcript that {@link GatewayProcess} searches
 * for leak reports.
 */
public final class ProcessOutput {

    private final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
    private final StringBuilder all = new StringBuilder();
    private final CountDownLatch ended = new CountDownLatch(1);

    private ProcessOutput() {
    }

    /** Starts reading {@code p}'s output. */
    public static ProcessOutput of(Process p) {
        ProcessOutput o = new ProcessOutput();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (o.all) {
                        o.all.append(line).append('\n');
                    }
                    o.queue.add(line);
                }
            } catch (IOException e) {
                // process gone
            } finally {
                o.ended.countDown();
            }
        }, "jar-output");
        t.setDaemon(true);
        t.start();
        return o;
    }

    /** Lines as they are printed; each is taken once. */
    public BlockingQueue<String> queue() {
        return queue;
    }

    /** Everything printed so far. */
    public String all() {
        synchronized (all) {
            return all.toString();
        }
    }

    /** Waits until the output ends (the process closed it), at most {@code timeout}. */
    public boolean awaitEnd(Duration timeout) throws InterruptedException {
        return ended.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }
}
