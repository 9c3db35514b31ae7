package io.sluice.server.demo;

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
        return new DemoBoltBackend(BoltRpcDemo.start(host, port, ioThread)); // throws if it cannot bind
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
