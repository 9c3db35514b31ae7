package io.sluice.codec.http;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;

import static io.sluice.codec.http.PathNormalizer.EscapedSlashes.DECODE;
import static io.sluice.codec.http.PathNormalizer.EscapedSlashes.KEEP;
import static io.sluice.codec.http.PathNormalizer.EscapedSlashes.REJECT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PathNormalizerTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/", "/index.html", "/api/v1/items/42", "/.well-known/acme", "/a.b/c..d/...", "/a/..b/.c/",
            "/a//b", "/x%20y%2F", "/%E2%82%AC"})
    void anAlreadyNormalPathIsReturnedAsItIs(String path) {
        byte[] b = path.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(PathNormalizer.check(b, 0, b.length, KEEP, false)).isEqualTo(PathNormalizer.NORMAL);
        assertThat(PathNormalizer.normalize(path, KEEP, false)).isSameAs(path);
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource(delimiter = '|', value = {
            "/pub/../private.txt|REJECT|false|/private.txt",
            "/pub/%2e%2e/private.txt|REJECT|false|/private.txt",
            "/pub/..%2fprivate.txt|KEEP|false|/pub/..%2Fprivate.txt",
            "/pub/..%2fprivate.txt|DECODE|false|/private.txt",
            "/pub/..%5cprivate.txt|DECODE|false|/private.txt",
            "/a//b//|REJECT|true|/a/b/",
            "/a/%2F/b|DECODE|true|/a/b",
            "/a/%2F/b|DECODE|false|/a///b",
            "/..|REJECT|false|/",
            "/.|REJECT|false|/",
            "/a/b/c/./../../g|REJECT|false|/a/g",
            "/mid/content=5/../6|REJECT|false|/mid/6",
            "/%61%62%63%2d%5f%7e|REJECT|false|/abc-_~",
            "/%c3%a9|REJECT|false|/%C3%A9",
    })
    void normalizes(String path, PathNormalizer.EscapedSlashes escaped, boolean merge, String expected) {
        assertThat(PathNormalizer.normalize(path, escaped, merge)).isEqualTo(expected);
    }

    @Test
    void rejects() {
        assertThatThrownBy(() -> PathNormalizer.normalize("/a%2Fb", REJECT, false)).hasMessageContaining("encoded slash");
        assertThatThrownBy(() -> PathNormalizer.normalize("/a%5cb", REJECT, true)).hasMessageContaining("encoded slash");
        assertThatThrownBy(() -> PathNormalizer.normalize("/a\\b", DECODE, false)).hasMessage("backslash in path");
        assertThatThrownBy(() -> PathNormalizer.normalize("/a%g0", KEEP, false)).hasMessageContaining("percent-encoding");
        assertThatThrownBy(() -> PathNormalizer.normalize("/a%0", KEEP, false)).hasMessageContaining("percent-encoding");
    }
}
