package io.sluice.server.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/** The standard output of a child process (the gateway jar), line by line, read on a daemon thread. */
public final class ProcessOutput {

    private ProcessOutput() {
    }

    /** Starts reading {@code p}'s output; every line lands in the returned queue as it is printed. */
    public static BlockingQueue<String> lines(Process p) {
        BlockingQueue<String> q = new LinkedBlockingQueue<>();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    q.add(line);
                }
            } catch (IOException e) {
                // process gone
            }
        }, "jar-output");
        t.setDaemon(true);
        t.start();
        return q;
    }
}
