package io.sluice.server.demo;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A real bolt {@code RpcServer} (sofa-bolt) for the embedded default config and for tests. It
 * answers:
 * <ul>
 *   <li>sofaload's request, class {@value #SOFA_REQUEST_CLASS}, with the string {@code "ok"}
 *       (status SUCCESS, a non-empty body). No sofa-rpc jars are needed: a custom serializer
 *       registered for that class name keeps the Hessian content as raw bytes instead of
 *       deserializing it;</li>
 *   <li>a {@code java.lang.String} request (what {@code RpcClient.invokeSync(addr, "text", ms)}
 *       sends) with the same string, echoed.</li>
 * </ul>
 * Oneway requests are processed too (and counted) but, as bolt does, not answered.
 *
 * <p>The bolt library is an optional dependency of gateway-server (the standalone jar has it; an
 * application embedding the gateway does not get it): {@link #start} fails with a clear message
 * when {@code com.alipay.sofa:bolt} is not on the classpath.
 *
 * <p>Bolt's custom serializers live in a JVM-wide registry; the SofaRequest one is registered
 * once per JVM and is harmless for other servers in the same JVM (it only applies to that class).
 */
public final class DemoBoltBackend implements AutoCloseable {

    /** The request class name SOFARPC and sofaload send. */
    public static final String SOFA_REQUEST_CLASS = "com.alipay.sofa.rpc.core.request.SofaRequest";
    /** A class of the bolt library, to tell whether it is on the classpath. */
    static final String BOLT_SERVER_CLASS = "com.alipay.remoting.rpc.RpcServer";

    private final BoltRpcDemo server;

    private DemoBoltBackend(BoltRpcDemo server) {
        this.server = server;
    }

    /** Starts a backend on {@code host:port} (port 0 = any free port). */
    public static DemoBoltBackend start(String host, int port) {
        return start(host, port, false);
    }

    /**
     * Starts a backend on {@code host:port}; with {@code ioThread} its processors answer on the
     * connection's I/O thread instead of bolt's business thread pool (bolt's
     * {@code processInIOThread}: no thread hand-off for a request that arrives alone; bolt still
     * hands the requests decoded from one read together to its default executor, once per batch,
     * unless {@code bolt.rpc.dispatch-msg-list-in-default-executor} is false). For benchmarks: a
     * backend that costs less CPU and latency per request.
     *
     * @throws IllegalStateException if the bolt library is not on the classpath
     */
    public static DemoBoltBackend start(String host, int port, boolean ioThread) {
        requireBolt(DemoBoltBackend.class.getClassLoader());
        quietBoltLogging();
        return new DemoBoltBackend(BoltRpcDemo.start(host, port, ioThread)); // throws if it cannot bind
    }

    /**
     * The bolt library logs six or more lines at INFO for every connection (registered, active,
     * user events, closed, inactive, unregistered); at WARN it still says what matters. Bolt's
     * loggers come from sofa-common-tools, which configures a logging library it finds (logback,
     * log4j2, log4j: bolt's files under {@code ~/logs/bolt} at level
     * {@code com.alipay.remoting.client.log.level}) or else hands every line to one SLF4J logger,
     * {@code com.alipay.sofa.common.log} (in the standalone jar: slf4j-simple, whose per-logger
     * level is the system property {@code org.slf4j.simpleLogger.log.<name>}). Both levels are set
     * to WARN here, before bolt creates its loggers, unless the user set them. The first request
     * also makes Hessian warn through java.util.logging that it cannot open JDK fields by
     * reflection (harmless: it works without), and sofa-common-tools say on stderr that it found no
     * logging library for Hessian's space: those are quieted too (Hessian's JUL loggers at SEVERE
     * unless a JUL config file or class is given; sofa-common-tools' own level at ERROR).
     */
    static void quietBoltLogging() {
        setIfAbsent("com.alipay.remoting.client.log.level", "WARN");
        setIfAbsent("org.slf4j.simpleLogger.log." + SOFA_FALLBACK_LOGGER, "warn");
        setIfAbsent("sofa.middleware.log.internal.level", "ERROR");
        if (System.getProperty("java.util.logging.config.file") == null
                && System.getProperty("java.util.logging.config.class") == null) {
            HESSIAN_JUL.setLevel(Level.SEVERE);
        }
    }

    /** Held here: java.util.logging keeps only weak references to loggers, and would forget the level. */
    private static final Logger HESSIAN_JUL = Logger.getLogger("com.caucho.hessian");

    /** The one SLF4J logger sofa-common-tools gives bolt when it finds no logging library it configures. */
    static final String SOFA_FALLBACK_LOGGER = "com.alipay.sofa.common.log";

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /** Throws an {@link IllegalStateException} saying what to add when bolt cannot be loaded by {@code loader}. */
    static void requireBolt(ClassLoader loader) {
        try {
            Class.forName(BOLT_SERVER_CLASS, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException("the demo Bolt backend needs com.alipay.sofa:bolt on the classpath"
                    + " (an optional dependency of gateway-server: add it to your build, or run the standalone jar)");
        }
    }

    /** The bound port. */
    public int port() {
        return server.port();
    }

    /** Requests processed (two-way and oneway). */
    public long handled() {
        return server.handled();
    }

    /** The name of the thread that handled the latest request (null before the first); for diagnostics and tests. */
    public String lastHandlerThread() {
        return server.lastHandlerThread();
    }

    /** Stops the server and closes its client connections. */
    @Override
    public void close() {
        server.close();
    }
}
