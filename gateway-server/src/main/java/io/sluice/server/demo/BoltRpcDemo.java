package io.sluice.server.demo;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.CustomSerializerManager;
import com.alipay.remoting.DefaultCustomSerializer;
import com.alipay.remoting.rpc.RequestCommand;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.RpcRequestCommand;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;

import java.util.concurrent.atomic.AtomicLong;

/** The bolt-library half of {@link DemoBoltBackend}; loaded only once bolt is known to be on the classpath. */
final class BoltRpcDemo implements AutoCloseable {

    private static final String SOFA_REQUEST_CLASS = DemoBoltBackend.SOFA_REQUEST_CLASS;

    private final RpcServer server;
    private final AtomicLong handled = new AtomicLong();
    private volatile String lastHandlerThread;

    private BoltRpcDemo(String host, int port, boolean ioThread) {
        registerRawSofaRequestSerializer();
        // no server-side connection manager: the demo never calls its clients, and the manager logs
        // a warning for every connection that closes
        server = new RpcServer(host, port, false);
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

    /**
     * Starts a backend on {@code host:port}; with {@code ioThread} its processors answer on the
     * connection's I/O thread instead of bolt's business thread pool (bolt's
     * {@code processInIOThread}: no thread hand-off for a request that arrives alone; bolt still
     * hands the requests decoded from one read together to its default executor, once per batch,
     * unless {@code bolt.rpc.dispatch-msg-list-in-default-executor} is false). For benchmarks: a
     * backend that costs less CPU and latency per request.
     */
    static BoltRpcDemo start(String host, int port, boolean ioThread) {
        BoltRpcDemo b = new BoltRpcDemo(host, port, ioThread);
        b.server.startup(); // throws if it cannot bind
        return b;
    }

    /** The bound port. */
    int port() {
        return server.port();
    }

    /** Requests processed (two-way and oneway). */
    long handled() {
        return handled.get();
    }

    /** The name of the thread that handled the latest request (null before the first); for diagnostics and tests. */
    String lastHandlerThread() {
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
