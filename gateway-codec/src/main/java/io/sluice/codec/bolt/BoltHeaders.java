package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The SOFARPC header map codec: a plain concatenation of entries
 * {@code int32 keyLen | key UTF-8 | int32 valueLen | value UTF-8}, no count, no terminator.
 * A length of -1 means {@code null} and the pair is skipped on decode; the encoder omits pairs
 * whose key or value is {@code null}.
 *
 * <p>Lookups scan the bytes in place and compare keys byte by byte; only the value found is turned
 * into a {@code String}. For a malformed map (a length other than -1 that is negative, a length
 * running past the end, or 1–3 trailing bytes) lookups return {@code null} and {@link #decode}
 * returns the entries before the damage.
 */
public final class BoltHeaders {

    private BoltHeaders() {
    }

    /**
     * Finds the value of {@code key} (UTF-8 bytes) in the header map at {@code buf[index, index+length)}
     * without changing the buffer's indices. Like SOFARPC's {@code HashMap}-based decoder, the
     * last of duplicate keys wins (so the gateway routes on the value the backend will see).
     * Returns {@code null} when the key is absent or the map is malformed.
     */
    public static String find(ByteBuf buf, int index, int length, byte[] key) {
        return find(buf, index, length, key, null);
    }

    /**
     * As {@link #find(ByteBuf, int, int, byte[])}, but when the value's bytes spell {@code likely}
     * (an ASCII string, typically the value this connection sent last time) returns that very
     * instance instead of decoding a new one: a repeated routing key costs a compare, not an
     * allocation.
     */
    public static String find(ByteBuf buf, int index, int length, byte[] key, String likely) {
        int pos = index;
        int end = index + length;
        int foundAt = -1;
        int foundLen = 0;
        while (end - pos >= 4) {
            int keyLen = buf.getInt(pos);
            pos += 4;
            int keyAt = pos;
            if (keyLen > 0) {
                if (keyLen > end - pos) {
                    return null;
                }
                pos += keyLen;
            } else if (keyLen < -1) {
                return null;
            }
            if (end - pos < 4) {
                return null;
            }
            int valueLen = buf.getInt(pos);
            pos += 4;
            int valueAt = pos;
            if (valueLen > 0) {
                if (valueLen > end - pos) {
                    return null;
                }
                pos += valueLen;
            } else if (valueLen < -1) {
                return null;
            }
            if (keyLen == key.length && valueLen >= 0 && equalsAt(buf, keyAt, key)) {
                foundAt = valueAt;
                foundLen = valueLen;
            }
        }
        if (pos != end || foundAt < 0) {
            return null;
        }
        if (foundLen == 0) {
            return "";
        }
        if (likely != null && spells(buf, foundAt, foundLen, likely)) {
            return likely;
        }
        return buf.toString(foundAt, foundLen, StandardCharsets.UTF_8);
    }

    /** Whether {@code buf[index, index+length)} is exactly the ASCII string {@code s}. */
    private static boolean spells(ByteBuf buf, int index, int length, String s) {
        if (s.length() != length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = s.charAt(i);
            if (c >= 0x80 || buf.getByte(index + i) != (byte) c) {
                return false;
            }
        }
        return true;
    }

    /** Decodes the whole header map at {@code buf[index, index+length)} (for tests and admin views). */
    public static Map<String, String> decode(ByteBuf buf, int index, int length) {
        Map<String, String> map = new LinkedHashMap<>();
        int pos = index;
        int end = index + length;
        while (end - pos >= 4) {
            int keyLen = buf.getInt(pos);
            pos += 4;
            String key = null;
            if (keyLen >= 0) {
                if (keyLen > end - pos) {
                    break;
                }
                key = buf.toString(pos, keyLen, StandardCharsets.UTF_8);
                pos += keyLen;
            } else if (keyLen != -1) {
                break;
            }
            if (end - pos < 4) {
                break;
            }
            int valueLen = buf.getInt(pos);
            pos += 4;
            String value = null;
            if (valueLen >= 0) {
                if (valueLen > end - pos) {
                    break;
                }
                value = buf.toString(pos, valueLen, StandardCharsets.UTF_8);
                pos += valueLen;
            } else if (valueLen != -1) {
                break;
            }
            if (key != null && value != null) {
                map.put(key, value);
            }
        }
        return map;
    }

    /** Appends the encoding of {@code headers} to {@code out}; null keys or values are omitted. */
    public static void encode(Map<String, String> headers, ByteBuf out) {
        for (Map.Entry<String, String> e : headers.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                continue;
            }
            writeString(out, e.getKey());
            writeString(out, e.getValue());
        }
    }

    private static void writeString(ByteBuf out, String s) {
        int lengthAt = out.writerIndex();
        out.writeInt(0);
        int written = out.writeCharSequence(s, StandardCharsets.UTF_8);
        out.setInt(lengthAt, written);
    }

    private static boolean equalsAt(ByteBuf buf, int index, byte[] key) {
        for (int i = 0; i < key.length; i++) {
            if (buf.getByte(index + i) != key[i]) {
                return false;
            }
        }
        return true;
    }
}
