package io.sluice.server.tls;

import com.alipay.remoting.config.BoltClientOption;
import com.alipay.remoting.rpc.RpcClient;

/**
 * The real bolt RpcClient with its client SSL options ({@code bolt.client.ssl.*}: enable, a
 * PKCS#12 trust store, its password), run by {@link AutoTlsIT} in its own JVM: bolt builds its
 * client SslContext without a peer host, and Netty 4.2 verifies host names by default, so that JVM
 * sets {@code -Dio.netty.handler.ssl.defaultEndpointVerificationAlgorithm=NONE} (what a bolt user on
 * Netty 4.2 must do too) without changing the test JVM's default.
 *
 * <p>Args: {@code address trustStore password message...}; prints one answer per message and exits 0.
 */
public final class BoltTlsClientMain {

    private BoltTlsClientMain() {
    }

    public static void main(String[] args) throws Exception {
        RpcClient c = new RpcClient();
        c.option(BoltClientOption.CLI_SSL_ENABLE, true);
        c.option(BoltClientOption.CLI_SSL_KEYSTORE_TYPE, "PKCS12");
        c.option(BoltClientOption.CLI_SSL_KEYSTORE, args[1]);
        c.option(BoltClientOption.CLI_SSL_KEYSTORE_PASS, args[2]);
        c.startup();
        int code = 0;
        try {
            for (int i = 3; i < args.length; i++) {
                System.out.println("answer:" + c.invokeSync(args[0], args[i], 5000));
            }
        } catch (Exception e) {
            System.out.println("failed:" + e);
            code = 1;
        } finally {
            c.shutdown();
        }
        System.out.flush();
        Runtime.getRuntime().halt(code); // bolt leaves non-daemon threads behind
    }
}
