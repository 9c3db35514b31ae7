package io.sluice.server.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The shaded jar ({@code target/sluice.jar}) started as a user runs it, in its own JVM, with Netty's
 * leak detection at PARANOID. Its output (stdout and stderr) is read line by line on a daemon
 * thread; {@link #close()} kills what still runs and fails the test if the output contains a
 * {@code LEAK:} report. Start every forked gateway through this class.
 */
public final class GatewayProcess implements AutoCloseable {

    public static final Path JAR = Path.of("target", "sluice.jar");

    /** What every forked gateway JVM gets besides the test's arguments. */
    static final List<String> JVM_ARGS = List.of("-Xmx256m", "-Dio.netty.leakDetection.level=PARANOID",
            "-Dio.netty.leakDetection.targetRecords=8");

    private final Process process;
    private final ProcessOutput output;

    private GatewayProcess(Process process) {
        this.process = process;
        this.output = ProcessOutput.of(process);
    }

    /**
     * {@code java <JVM_ARGS> -jar target/sluice.jar args... --no-warm-up}: forked gateways skip the
     * warm-up (seconds per start) unless a test asks for it with {@link #startWarm}.
     */
    public static GatewayProcess start(String... args) throws IOException {
        return new GatewayProcess(new ProcessBuilder(command(withoutWarmUp(args))).redirectErrorStream(true).start());
    }

    /** {@code java <JVM_ARGS> -jar target/sluice.jar args...}, with the jar's default warm-up. */
    public static GatewayProcess startWarm(String... args) throws IOException {
        return new GatewayProcess(new ProcessBuilder(command(args)).redirectErrorStream(true).start());
    }

    private static String[] withoutWarmUp(String... args) {
        List<String> a = new ArrayList<>(List.of(args));
        a.add("--no-warm-up");
        return a.toArray(String[]::new);
    }

    /**
     * The same command run by {@code /bin/sh} with SIGINT ignored ({@code trap '' INT; exec ...}), as
     * a job started in the background of a non-interactive shell inherits it. {@code /bin/sh} must exist.
     */
    public static GatewayProcess startWithSigintIgnored(String... args) throws IOException {
        StringBuilder script = new StringBuilder("trap '' INT; exec");
        for (String arg : command(withoutWarmUp(args))) {
            script.append(" '").append(arg.replace("'", "'\\''")).append('\'');
        }
        return new GatewayProcess(new ProcessBuilder("/bin/sh", "-c", script.toString()).redirectErrorStream(true).start());
    }

    private static List<String> command(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(JVM_ARGS);
        cmd.add("-jar");
        cmd.add(JAR.toString());
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * Sends SIGTERM without closing the output pipe ({@link Process#destroy()} closes it, losing what
     * the gateway prints while it stops) and waits; returns the exit code.
     */
    public int sigterm(Duration timeout) throws InterruptedException {
        process.toHandle().destroy();
        return awaitExit(timeout);
    }

    public Process process() {
        return process;
    }

    /** Every line printed so far, as it is printed (each line is taken once). */
    public BlockingQueue<String> lines() {
        return output.queue();
    }

    /** All output so far (lines taken from {@link #lines()} included). */
    public String output() {
        return output.all();
    }

    /** Waits for the process to exit and its output to end; returns the exit code. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("gateway still running after " + timeout + "; output:\n" + output());
        }
        output.awaitEnd(Duration.ofSeconds(10));
        return process.exitValue();
    }

    /** Sends SIGTERM (drain, then exit 0) and waits; returns the exit code. */
    public int terminate(Duration timeout) throws InterruptedException {
        process.destroy();
        return awaitExit(timeout);
    }

    /**
     * Runs a full garbage collection in the gateway JVM ({@code jcmd <pid> GC.run}), so buffers it
     * leaked so far are reported when it next allocates one (send a request after this).
     */
    public void collectGarbage() throws IOException, InterruptedException {
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(process.pid()), "GC.run").redirectErrorStream(true).start();
        if (!jcmd.waitFor(20, TimeUnit.SECONDS)) {
            jcmd.destroyForcibly();
            throw new AssertionError("jcmd GC.run did not finish in 20 s");
        }
    }

    /** Kills the process if it still runs; fails if its output reported a leak. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        output.awaitEnd(Duration.ofSeconds(10));
        assertNoLeaks(output.all());
    }

    /** Fails if {@code output} holds a Netty leak report, quoting it. */
    public static void assertNoLeaks(String output) {
        int at = output.indexOf("LEAK:");
        if (at >= 0) {
            int from = output.lastIndexOf('\n', at) + 1;
            throw new AssertionError("the forked gateway reported a ByteBuf leak:\n" + output.substring(from,
                    Math.min(output.length(), from + 8000)));
        }
    }
}
