package io.lethe.bench.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lethe.bench.suite.Csv.Row;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BestPeerTest {
    @TempDir
    Path tmp;

    private List<Row> rows(String... lines) throws IOException {
        Path file = tmp.resolve("rows.csv");
        Files.writeString(file, "round,system,cost\n" + String.join("\n", lines) + "\n");
        return Csv.read(file);
    }

    @Test
    void eachRoundTakesItsOwnBestPeer() throws IOException {
        List<Row> lethe = rows("1,lethe,10", "2,lethe,10");
        List<Row> peers = rows("1,a,40", "1,b,20", "2,a,5", "2,b,50");
        // Lower is better: b in round 1 (10 / 20), a in round 2 (10 / 5).
        BestPeer lower = BestPeer.of(lethe, peers, "cost", false);
        assertEquals(Set.of("a", "b"), lower.winners());
        assertEquals(0.5, lower.ratio().min(), 1e-9);
        assertEquals(2.0, lower.ratio().max(), 1e-9);
        // Higher is better: a in round 1 (10 / 40), b in round 2 (10 / 50).
        BestPeer higher = BestPeer.of(lethe, peers, "cost", true);
        assertEquals(Set.of("a", "b"), higher.winners());
        assertEquals(0.2, higher.ratio().min(), 1e-9);
        assertEquals(0.25, higher.ratio().max(), 1e-9);
    }

    @Test
    void aRoundWithoutPeersGivesNoRatio() throws IOException {
        BestPeer none = BestPeer.of(rows("1,lethe,10"), rows("2,a,5"), "cost", false);
        assertNull(none.ratio());
        assertEquals(Set.of(), none.winners());
    }
}
