package io.sluice.bench.demo;

import io.sluice.server.demo.DemoBoltBackend;
import io.sluice.server.demo.DemoHttpBackend;

import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;

/**
 * The two small programs of the slow-start demonstration (MOSN v1.5.0's functional test, redone on
 * Sluice): {@code server --port N}, an HTTP server that answers with its own port, and
 * {@code count --port 2046 --total 100}, a client that sends {@code total} requests through the
 * gateway and prints how many each backend answered, as {@code port:  8080 count:  17}.
 */
public final class SlowStartDemo {

    private SlowStartDemo() {
    }

    public static void server(String[] args) throws InterruptedException {
        int port = intOption(args, "--port", 8080);
        DemoHttpBackend b = DemoHttpBackend.start("127.0.0.1", port, "");
        System.out.println("demo server listening on 127.0.0.1:" + b.port());
        Runtime.getRuntime().addShutdownHook(new Thread(b::close));
        new CountDownLatch(1).await();
    }

    /** {@code bolt-server --port N}: the demo Bolt backend (a real bolt RpcServer answering sofaload's request). */
    public static void boltServer(String[] args) throws InterruptedException {
        int port = intOption(args, "--port", 12201);
        boolean ioThread = Arrays.asList(args).contains("--io-thread");
        DemoBoltBackend b = DemoBoltBackend.start("127.0.0.1", port, ioThread);
        System.out.println("demo Bolt server listening on 127.0.0.1:" + b.port());
        Runtime.getRuntime().addShutdownHook(new Thread(b::close));
        new CountDownLatch(1).await();
    }

    public static void count(String[] args) throws Exception {
        int port = intOption(args, "--port", 2046);
        int total = intOption(args, "--total", 100);
        print(count(port, total), System.out);
    }

    /** Sends {@code total} sequential GETs to the gateway on {@code port}; counts answers per backend port. */
    public static Map<Integer, Integer> count(int port, int total) throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        Map<Integer, Integer> counts = new TreeMap<>();
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/")).timeout(Duration.ofSeconds(5)).build();
        for (int i = 0; i < total; i++) {
            HttpResponse<String> r = client.send(req, HttpResponse.BodyHandlers.ofString());
            int backend = r.headers().firstValue("x-backend-port").map(Integer::parseInt).orElse(-r.statusCode());
            counts.merge(backend, 1, Integer::sum);
        }
        return counts;
    }

    /** The original client's lines: {@code port:  8080 count:  17} (negative "ports" are HTTP errors). */
    public static void print(Map<Integer, Integer> counts, PrintStream out) {
        counts.forEach((p, n) -> out.println(p < 0 ? "status:  " + (-p) + " count:  " + n : "port:  " + p + " count:  " + n));
    }

    private static int intOption(String[] args, String name, int def) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals(name) && i + 1 < args.length) {
                return Integer.parseInt(args[i + 1]);
            }
            if (args[i].startsWith(name + "=")) {
                return Integer.parseInt(args[i].substring(name.length() + 1));
            }
        }
        return def;
    }
}
