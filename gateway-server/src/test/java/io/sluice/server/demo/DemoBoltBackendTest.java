package io.sluice.server.demo;

import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DemoBoltBackendTest {

    @Test
    void withoutTheBoltLibraryTheDemoSaysWhatItNeeds() throws Exception {
        try (URLClassLoader noBolt = new URLClassLoader(new URL[0], ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> DemoBoltBackend.requireBolt(noBolt))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("the demo Bolt backend needs com.alipay.sofa:bolt on the classpath");
        }
        assertThatCode(() -> DemoBoltBackend.requireBolt(DemoBoltBackend.class.getClassLoader())).doesNotThrowAnyException();
    }
}
