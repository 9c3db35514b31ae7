package io.sluice.core.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;
import java.net.UnknownHostException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CidrRangeTest {

    private static byte[] ip(String literal) throws UnknownHostException {
        return InetAddress.getByName(literal).getAddress();
    }

    @ParameterizedTest(name = "{0} contains {1}: {2}")
    @CsvSource({
            "10.0.0.0/8, 10.255.1.2, true",
            "10.0.0.0/8, 11.0.0.0, false",
            "10.1.2.3, 10.1.2.3, true",
            "10.1.2.3, 10.1.2.4, false",
            "0.0.0.0/0, 203.0.113.9, true",
            "0.0.0.0/0, ::1, false",
            "192.168.1.128/25, 192.168.1.200, true",
            "192.168.1.128/25, 192.168.1.127, false",
            "::1, ::1, true",
            "::1, 127.0.0.1, false",
            "fd00::/8, fdff:1:2:3:4:5:6:7, true",
            "fd00::/8, fe00::1, false",
            "2001:db8::/64, 2001:db8::ffff:1, true",
            "2001:db8::/64, 2001:db8:0:1::1, false",
            "2001:db8::/65, 2001:db8::7fff:0:0:1, true",
            "2001:db8::/65, 2001:db8::8000:0:0:1, false",
            "::/0, 2001:db8::1, true",
    })
    void matchesAddressesInItsRange(String range, String address, boolean expected) throws UnknownHostException {
        assertThat(CidrRange.parse(range).contains(ip(address))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"proxy.internal", "10.0.0", "10.0.0.256", "10.0.0.1/33", "::1/129", "10.0.0.1/", "10.0.0.1/-1",
            "fe80::1%eth0", "::ffff:10.0.0.1", "", "1.2.3.4/8/8"})
    void refusesAnythingButAddressLiterals(String text) {
        assertThatThrownBy(() -> CidrRange.parse(text)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void equalRangesAreEqualAndPrintCanonically() {
        assertThat(CidrRange.parse("10.1.2.3/8")).isEqualTo(CidrRange.parse("10.0.0.0/8"));
        assertThat(CidrRange.parse("10.1.2.3/8")).hasToString("10.0.0.0/8");
        assertThat(CidrRange.parse("2001:db8::1/32")).hasToString("2001:db8:0:0:0:0:0:0/32");
    }
}
