package com.example;

import com.alipay.sofa.rpc.config.ApplicationConfig;
import com.alipay.sofa.rpc.config.ConsumerConfig;
import com.alipay.sofa.rpc.config.ProviderConfig;
import com.alipay.sofa.rpc.config.RegistryConfig;
import com.alipay.sofa.rpc.config.ServerConfig;

/**
 * A real SOFARPC 5.13.2 peer for SofaRpcConformanceIT, run in its own JVM (its classpath:
 * ../pom.xml). Two modes:
 * <pre>
 *   provide ZK_ADDRESS PORT WEIGHT WARMUP_MS   export EchoService on 127.0.0.1:PORT (virtual host 127.0.0.1),
 *                                              register it in ZooKeeper, print "EXPORTED", block until killed
 *   call HOST:PORT N                           call echo N times over Bolt straight to HOST:PORT (the gateway),
 *                                              print "REPLY ..." per answer (a failed call is retried every
 *                                              100 ms, at most 50 times, printing "RETRY ..."), exit 0
 * </pre>
 */
public final class SofaEcho {

    /** The service: its interface name is the registry node, {@code com.example.SofaEcho$EchoService}. */
    public interface EchoService {
        String echo(String s);
    }

    private SofaEcho() {
    }

    public static void main(String[] args) throws Exception {
        Thread.currentThread().setContextClassLoader(SofaEcho.class.getClassLoader());
        if ("provide".equals(args[0])) {
            int port = Integer.parseInt(args[2]);
            RegistryConfig registry = new RegistryConfig().setProtocol("zookeeper").setAddress(args[1]);
            ServerConfig server = new ServerConfig().setProtocol("bolt").setHost("127.0.0.1")
                    .setVirtualHost("127.0.0.1").setPort(port).setDaemon(false);
            ProviderConfig<EchoService> provider = new ProviderConfig<EchoService>()
                    .setInterfaceId(EchoService.class.getName())
                    .setApplication(new ApplicationConfig().setAppName("echo-app"))
                    .setRef(s -> "from:" + port + ":" + s)
                    .setServer(server).setRegistry(registry)
                    .setWeight(Integer.parseInt(args[3]));
            long warmup = Long.parseLong(args[4]);
            if (warmup > 0) {
                provider.setParameter("warmupTime", String.valueOf(warmup));
                provider.setParameter("warmupWeight", "10");
            }
            provider.export();
            System.out.println("EXPORTED " + System.currentTimeMillis());
            System.out.flush();
            Thread.currentThread().join();
        } else if ("call".equals(args[0])) {
            ConsumerConfig<EchoService> consumer = new ConsumerConfig<EchoService>()
                    .setInterfaceId(EchoService.class.getName())
                    .setApplication(new ApplicationConfig().setAppName("echo-client"))
                    .setProtocol("bolt").setDirectUrl("bolt://" + args[1]).setProxy("jdk")
                    .setTimeout(5000).setConnectTimeout(5000);
            EchoService echo = consumer.refer();
            int n = Integer.parseInt(args[2]);
            for (int i = 0; i < n; i++) {
                for (int attempt = 1; ; attempt++) {
                    try {
                        System.out.println("REPLY " + echo.echo("hi" + i));
                        break;
                    } catch (RuntimeException e) {
                        // a gateway routing by registry answers the first call of a service while it discovers it
                        System.out.println("RETRY " + attempt + " " + e.getMessage());
                        if (attempt == 50) {
                            throw e;
                        }
                        Thread.sleep(100);
                    }
                }
            }
            System.out.flush();
            System.exit(0);
        } else {
            System.err.println("usage: provide ZK PORT WEIGHT WARMUP_MS | call HOST:PORT N");
            System.exit(2);
        }
    }
}
