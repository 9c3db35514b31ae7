package io.sluice.core.config;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * An IPv4 or IPv6 address range in CIDR notation ({@code 10.0.0.0/8}, {@code 2001:db8::/32}); a bare
 * address is a range of one ({@code /32} or {@code /128}). Parsing never resolves a name: only
 * address literals are accepted. Matching allocates nothing.
 *
 * @param ipv6         whether the range is of IPv6 addresses
 * @param high         the network's first 64 bits (IPv4: 0)
 * @param low          the network's last 64 bits (IPv4: the address in the low 32 bits)
 * @param prefixLength leading bits that must match
 */
public record CidrRange(boolean ipv6, long high, long low, int prefixLength) {

    public CidrRange {
        Checks.range("prefix_length", prefixLength, 0, ipv6 ? 128 : 32);
        long[] masked = mask(ipv6, high, low, prefixLength);
        high = masked[0];
        low = masked[1];
    }

    /**
     * Parses {@code 10.0.0.0/8}, {@code 192.168.1.7}, {@code ::1}, {@code fd00::/8}.
     *
     * @throws IllegalArgumentException when {@code text} is not an address literal with an optional prefix length
     */
    public static CidrRange parse(String text) {
        String t = text.trim();
        int slash = t.indexOf('/');
        String addr = slash < 0 ? t : t.substring(0, slash);
        byte[] bytes = literal(addr);
        if (bytes == null) {
            throw new IllegalArgumentException("not an IPv4 or IPv6 address: " + addr);
        }
        boolean v6 = bytes.length == 16;
        int max = v6 ? 128 : 32;
        int prefix = max;
        if (slash >= 0) {
            String p = t.substring(slash + 1);
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new IllegalArgumentException("not a prefix length: " + p);
            }
            prefix = Integer.parseInt(p);
            if (prefix > max) {
                throw new IllegalArgumentException("prefix length " + prefix + " is over " + max);
            }
        }
        long[] hl = toLongs(bytes);
        return new CidrRange(v6, hl[0], hl[1], prefix);
    }

    /** Whether {@code address} (4 or 16 bytes, as {@link InetAddress#getAddress()} gives) is in this range. */
    public boolean contains(byte[] address) {
        return (address.length == 16) == ipv6 && matches(address);
    }

    private boolean matches(byte[] a) {
        long h = 0;
        long l = 0;
        if (ipv6) {
            for (int i = 0; i < 8; i++) {
                h = h << 8 | (a[i] & 0xff);
                l = l << 8 | (a[i + 8] & 0xff);
            }
        } else {
            for (int i = 0; i < 4; i++) {
                l = l << 8 | (a[i] & 0xff);
            }
        }
        int bits = ipv6 ? 128 : 32;
        int p = prefixLength;
        if (!ipv6) {
            return p == 0 || (l >>> (bits - p)) == (low >>> (bits - p));
        }
        if (p <= 64) {
            return p == 0 || (h >>> (64 - p)) == (high >>> (64 - p));
        }
        return h == high && (l >>> (128 - p)) == (low >>> (128 - p));
    }

    private static long[] mask(boolean v6, long high, long low, int prefix) {
        if (!v6) {
            long m = prefix == 0 ? 0 : (0xffffffffL << (32 - prefix)) & 0xffffffffL;
            return new long[] {0, low & m};
        }
        long mh = prefix == 0 ? 0 : prefix >= 64 ? -1L : -1L << (64 - prefix);
        long ml = prefix <= 64 ? 0 : prefix == 128 ? -1L : -1L << (128 - prefix);
        return new long[] {high & mh, low & ml};
    }

    private static long[] toLongs(byte[] a) {
        long h = 0;
        long l = 0;
        if (a.length == 16) {
            for (int i = 0; i < 8; i++) {
                h = h << 8 | (a[i] & 0xff);
                l = l << 8 | (a[i + 8] & 0xff);
            }
        } else {
            for (int i = 0; i < 4; i++) {
                l = l << 8 | (a[i] & 0xff);
            }
        }
        return new long[] {h, l};
    }

    /** The bytes of an IPv4 dotted-quad or an IPv6 literal (never a name lookup), or null. */
    private static byte[] literal(String s) {
        if (s.indexOf(':') >= 0) {
            if (s.indexOf('%') >= 0 || !s.chars().allMatch(c -> c == ':' || c == '.' || Character.digit(c, 16) >= 0)) {
                return null;
            }
            try {
                InetAddress a = InetAddress.getByName(s); // a literal: only its syntax is checked
                byte[] b = a.getAddress();
                if (a instanceof Inet4Address) {
                    return null; // an IPv4-mapped form: write the IPv4 address instead
                }
                return b;
            } catch (UnknownHostException e) {
                return null;
            }
        }
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return null;
        }
        byte[] b = new byte[4];
        for (int i = 0; i < 4; i++) {
            String p = parts[i];
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
                return null;
            }
            int v = Integer.parseInt(p);
            if (v > 255) {
                return null;
            }
            b[i] = (byte) v;
        }
        return b;
    }

    /** {@code 10.0.0.0/8}, {@code 2001:db8:0:0:0:0:0:0/32}. */
    @Override
    public String toString() {
        if (!ipv6) {
            return (low >>> 24 & 0xff) + "." + (low >>> 16 & 0xff) + "." + (low >>> 8 & 0xff) + "." + (low & 0xff)
                    + "/" + prefixLength;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            long word = i < 4 ? high >>> (48 - 16 * i) & 0xffff : low >>> (48 - 16 * (i - 4)) & 0xffff;
            sb.append(i == 0 ? "" : ":").append(Long.toHexString(word));
        }
        return sb.append('/').append(prefixLength).toString();
    }
}
