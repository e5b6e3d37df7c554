package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.time.LocalDateTime;

/** A result's fingerprint depends on the multiset of its rows, not on the changes' order. */
class NexmarkMultisetTest {

    @Test
    void theSameMultisetInAnotherOrderHasTheSameFingerprint() {
        NexmarkMultiset a = new NexmarkMultiset();
        a.apply(row(RowKind.INSERT, 1L, "x"));
        a.apply(row(RowKind.INSERT, 2L, "y"));
        a.apply(row(RowKind.INSERT, 2L, "y"));
        NexmarkMultiset b = new NexmarkMultiset();
        b.apply(row(RowKind.INSERT, 2L, "y"));
        b.apply(row(RowKind.INSERT, 1L, "x"));
        b.apply(row(RowKind.UPDATE_AFTER, 2L, "y"));
        assertEquals(a.fingerprint(), b.fingerprint());
        assertEquals(3, a.fingerprint().rows());
    }

    @Test
    void retractionsRemoveRows() {
        NexmarkMultiset updated = new NexmarkMultiset();
        updated.apply(row(RowKind.INSERT, 1L, "old"));
        updated.apply(row(RowKind.UPDATE_BEFORE, 1L, "old"));
        updated.apply(row(RowKind.UPDATE_AFTER, 1L, "new"));
        updated.apply(row(RowKind.INSERT, 2L, "gone"));
        updated.apply(row(RowKind.DELETE, 2L, "gone"));
        NexmarkMultiset plain = new NexmarkMultiset();
        plain.apply(row(RowKind.INSERT, 1L, "new"));
        assertEquals(plain.fingerprint(), updated.fingerprint());
        assertEquals(5, updated.changes());
    }

    @Test
    void differentResultsHaveDifferentFingerprints() {
        NexmarkMultiset once = new NexmarkMultiset();
        once.apply(row(RowKind.INSERT, 1L, "x"));
        NexmarkMultiset twice = new NexmarkMultiset();
        twice.apply(row(RowKind.INSERT, 1L, "x"));
        twice.apply(row(RowKind.INSERT, 1L, "x"));
        NexmarkMultiset other = new NexmarkMultiset();
        other.apply(row(RowKind.INSERT, 1L, "X"));
        assertNotEquals(once.fingerprint().sha256(), twice.fingerprint().sha256());
        assertNotEquals(once.fingerprint().sha256(), other.fingerprint().sha256());
    }

    @Test
    void aRemovalWithoutItsRowIsCountedNegative() {
        NexmarkMultiset m = new NexmarkMultiset();
        m.apply(row(RowKind.DELETE, 1L, "never added"));
        assertEquals(1, m.fingerprint().negativeRows());
        assertEquals(-1, m.fingerprint().rows());
    }

    @Test
    void rowsRenderCanonicallyWithSeparatorsEscaped() {
        Row r = Row.of(7L, "a|b\\c", null, LocalDateTime.of(2025, 1, 1, 0, 0, 1, 5_000_000));
        assertEquals("7|a\\|b\\\\c|\\N|2025-01-01T00:00:01.005", NexmarkMultiset.render(r));
        // "a|b" in one field must not read as "a" and "b" in two.
        assertNotEquals(NexmarkMultiset.render(Row.of("a|b")), NexmarkMultiset.render(Row.of("a", "b")));
    }

    private static Row row(RowKind kind, long id, String name) {
        Row r = Row.of(id, name);
        r.setKind(kind);
        return r;
    }
}
