package io.sluice.server.demo;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.CustomSerializerManager;
import com.alipay.remoting.DefaultCustomSerializer;
import com.alipay.remoting.rpc.RequestCommand;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.RpcRequestCommand;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A real bolt {@code RpcServer} (sofa-bolt) for the embedded default config and for tests. It
 * answers:
 * <ul>
 *   <li>sofaload's request, class {@value #SOFA_REQUEST_CLASS} (spec §4.3/§4.4), with the string
 *       {@code "ok"} (status SUCCESS, a non-empty body). No sofa-rpc jars are needed: a custom
 *       serializer registered for that class name keeps the Hessian content as raw bytes instead
 *       of deserializing it (spec §2.3);</li>
 *   <li>a {@code java.lang.String} request (what {@code RpcClient.invokeSync(addr, "text", ms)}
 *       sends) with the same string, echoed.</li>
 * </ul>
 * Oneway requests are processed too (and counted) but, as bolt does, not answered.
 *
 * <p>Bolt's custom serializers live in a JVM-wide registry; the SofaRequest one is registered
 * once per JVM and is harmless for other servers in the same JVM (it only applies to that class).
 */
public final class DemoBoltBackend implements AutoCloseable {

    /** The request class name SOFARPC and sofaload send. */
    public static final String SOFA_REQUEST_CLASS = "com.alipay.sofa.rpc.core.request.SofaRequest";

    private final RpcServer server;
    private final AtomicLong handled = new AtomicLong();
    private volatile String lastHandlerThread;

    private DemoBoltBackend(String host, int port, boolean ioThread) {
        registerRawSofaRequestSerializer();
        server = new RpcServer(host, port, true);
        server.registerUserProcessor(new SyncUserProcessor<Object>() {
            @Override
            public Object handleRequest(BizContext ctx, Object request) {
                handled.incrementAndGet();
                lastHandlerThread = Thread.currentThread().getName();
                return "ok";
            }

            @Override
            public boolean processInIOThread() {
                return ioThread;
            }

            @Override
            public String interest() {
                return SOFA_REQUEST_CLASS;
            }
        });
        server.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String request) {
                handled.incrementAndGet();
                lastHandlerThread = Thread.currentThread().getName();
                return request;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }

            @Override
            public boolean processInIOThread() {
                return ioThread;
            }
        });
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
     */
    public static DemoBoltBackend start(String host, int port, boolean ioThread) {
        DemoBoltBackend b = new DemoBoltBackend(host, port, ioThread);
        b.server.startup(); // throws if it cannot bind
        return b;
    }

    /** The bound port. */
    public int port() {
        return server.port();
    }

    /** Requests processed (two-way and oneway). */
    public long handled() {
        return handled.get();
    }

    /** The name of the thread that handled the latest request (null before the first); for diagnostics and tests. */
    public String lastHandlerThread() {
        return lastHandlerThread;
    }

    /** Stops the server and closes its client connections. */
    @Override
    public void close() {
        server.shutdown();
    }

    private static synchronized void registerRawSofaRequestSerializer() {
        if (CustomSerializerManager.getCustomSerializer(SOFA_REQUEST_CLASS) == null) {
            CustomSerializerManager.registerCustomSerializer(SOFA_REQUEST_CLASS, new RawContentSerializer());
        }
    }

    /** Keeps a request's content as its raw bytes (the processor never needs the SofaRequest object). */
    private static final class RawContentSerializer extends DefaultCustomSerializer {
        @Override
        public <T extends RequestCommand> boolean deserializeContent(T request) {
            RpcRequestCommand cmd = (RpcRequestCommand) request;
            cmd.setRequestObject(cmd.getContent() == null ? new byte[0] : cmd.getContent());
            return true;
        }
    }
}
