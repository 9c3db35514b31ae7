package io.sluice.codec.bolt;

/**
 * Bolt response status values (bolt 1.6.12's {@code com.alipay.remoting.ResponseStatus}).
 *
 * <p>Only these 13 values may be sent: the Java client's decoder throws on any other value and
 * sofaload indexes a 19-slot array with the raw value. Note the hex gap: 0x10–0x12 follow 9.
 */
public final class BoltStatus {

    public static final int SUCCESS = 0x0000;
    /** Java client raises a generic {@code InvokeException}. */
    public static final int ERROR = 0x0001;
    /** Java client raises {@code InvokeServerException} (body deserialized, a Throwable becomes its cause). */
    public static final int SERVER_EXCEPTION = 0x0002;
    public static final int UNKNOWN = 0x0003;
    /** Java client raises {@code InvokeServerBusyException}. */
    public static final int SERVER_THREADPOOL_BUSY = 0x0004;
    public static final int ERROR_COMM = 0x0005;
    public static final int NO_PROCESSOR = 0x0006;
    /** Java client raises {@code InvokeTimeoutException}. */
    public static final int TIMEOUT = 0x0007;
    /** Java client raises {@code InvokeSendFailedException}. */
    public static final int CLIENT_SEND_ERROR = 0x0008;
    /** Java client raises {@code CodecException}. */
    public static final int CODEC_EXCEPTION = 0x0009;
    /** Java client raises {@code ConnectionClosedException}. */
    public static final int CONNECTION_CLOSED = 0x0010;
    /** Java client raises {@code SerializationException} (body deserialized). */
    public static final int SERVER_SERIAL_EXCEPTION = 0x0011;
    /** Java client raises {@code DeserializationException} (body deserialized). */
    public static final int SERVER_DESERIAL_EXCEPTION = 0x0012;

    private BoltStatus() {
    }

    /** Whether {@code status} is one of the 13 defined values. */
    public static boolean isDefined(int status) {
        return (status >= SUCCESS && status <= CODEC_EXCEPTION)
                || (status >= CONNECTION_CLOSED && status <= SERVER_DESERIAL_EXCEPTION);
    }

    /** The bolt name of a status ({@code "TIMEOUT"}), or {@code "0x..."} for an undefined value. */
    public static String name(int status) {
        switch (status) {
            case SUCCESS: return "SUCCESS";
            case ERROR: return "ERROR";
            case SERVER_EXCEPTION: return "SERVER_EXCEPTION";
            case UNKNOWN: return "UNKNOWN";
            case SERVER_THREADPOOL_BUSY: return "SERVER_THREADPOOL_BUSY";
            case ERROR_COMM: return "ERROR_COMM";
            case NO_PROCESSOR: return "NO_PROCESSOR";
            case TIMEOUT: return "TIMEOUT";
            case CLIENT_SEND_ERROR: return "CLIENT_SEND_ERROR";
            case CODEC_EXCEPTION: return "CODEC_EXCEPTION";
            case CONNECTION_CLOSED: return "CONNECTION_CLOSED";
            case SERVER_SERIAL_EXCEPTION: return "SERVER_SERIAL_EXCEPTION";
            case SERVER_DESERIAL_EXCEPTION: return "SERVER_DESERIAL_EXCEPTION";
            default: return "0x" + Integer.toHexString(status);
        }
    }
}
