package io.sluice.server.testing;

import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} process on a loopback port, without persistence
 * ({@code --save '' --appendonly no}). The binary must be on PATH: when it is missing this FAILS
 * (CI installs it: see .ci/run), it never skips.
 */
public final class RedisServer implements AutoCloseable {

    private final int port;
    private Process process;

    private RedisServer(int port) {
        this.port = port;
    }

    /** The redis-server binary on PATH; fails the test with a clear message when there is none. */
    public static Path binary() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                Path p = Path.of(dir, "redis-server");
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        throw new AssertionError("redis-server is not on PATH (" + path + "): the global rate-limit tests need a real"
                + " Redis. Install it (Debian/Ubuntu: apt-get install -y redis-server); .ci/run does this itself.");
    }

    /** Starts redis-server on {@code port} (use {@link Ports#free()}) and waits until it accepts connections. */
    public static RedisServer start(int port) throws IOException, InterruptedException {
        RedisServer r = new RedisServer(port);
        r.launch();
        return r;
    }

    private void launch() throws IOException, InterruptedException {
        process = new ProcessBuilder(binary().toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--protected-mode", "no")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException e) {
                if (!process.isAlive()) {
                    throw new IOException("redis-server exited with " + process.exitValue() + " on port " + port);
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("redis-server did not listen on " + port + " within 10 s");
                }
                Thread.sleep(20);
            }
        }
    }

    public int port() {
        return port;
    }

    /** SIGKILL: the way an outage looks to clients (connections reset, nothing saved). */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGSTOP / SIGCONT: a Redis that holds connections open but answers nothing (a "slow" Redis). */
    public void pause(boolean stop) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", stop ? "-STOP" : "-CONT", Long.toString(process.pid()))
                .redirectErrorStream(true).start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new IOException("kill " + (stop ? "-STOP" : "-CONT") + " " + process.pid() + " failed");
        }
    }

    /** Starts it again on the same port, empty. */
    public void restart() throws IOException, InterruptedException {
        launch();
    }

    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            pause(false);
            kill();
        }
    }
}
