package io.lethe.bench.streams;

import io.lethe.examples.ClickStream;
import io.lethe.examples.TopicReader;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * What a run computed, to compare across systems: the last count of every sixteenth window of the
 * main topic's users (by the hash of {@code user@windowStart}; the drain's own keys depend on the
 * wall clock and are left out), folded into an order-free fingerprint.
 *
 * @param keys windows checked
 * @param fingerprint the sum of a mix of each checked window and its last count
 */
record OutputCheck(long keys, long fingerprint) {
    private static final int SAMPLE_MASK = 15;

    static OutputCheck of(String bootstrapServers, String topic) {
        Map<String, String> last = new HashMap<>();
        TopicReader.readDecided(bootstrapServers, topic, Duration.ofMinutes(10), r -> {
            if (!r.key().startsWith("drain-") && (r.key().hashCode() & SAMPLE_MASK) == 0) {
                last.put(r.key(), r.value());
            }
        });
        long fingerprint = 0;
        for (Map.Entry<String, String> e : last.entrySet()) {
            fingerprint += ClickStream.mix((e.getKey() + "=" + e.getValue()).hashCode() * 0x9E3779B97F4A7C15L);
        }
        return new OutputCheck(last.size(), fingerprint);
    }
}
