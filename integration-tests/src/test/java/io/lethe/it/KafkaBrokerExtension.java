package io.lethe.it;

import io.lethe.examples.Directories;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A {@link KafkaBroker} for the tests of one class: started before the first (and before the
 * class's own {@code @BeforeAll} methods), closed after the last. Register it as a static field
 * with {@code @RegisterExtension}.
 */
final class KafkaBrokerExtension implements BeforeAllCallback, AfterAllCallback {
    private Path dir;
    private KafkaBroker broker;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        dir = Files.createTempDirectory("lethe-it-kafka");
        broker = KafkaBroker.start(dir);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            if (broker != null) {
                broker.close();
            }
        } finally {
            if (dir != null) {
                Directories.deleteTree(dir);
            }
        }
    }

    KafkaBroker broker() {
        if (broker == null) {
            throw new IllegalStateException("The broker starts before the class's first test");
        }
        return broker;
    }
}
