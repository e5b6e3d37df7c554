package io.lethe.bench.jobs;

import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A query's result as a multiset, built from its changelog: +I and +U add a row, -U and -D remove one.
 * Its fingerprint is the same for the same multiset, whatever the order of the changes.
 *
 * <p>A row is rendered canonically (its fields in order, joined by {@code |}; null as {@code \N}; in
 * strings {@code \}, {@code |} and line breaks escaped; timestamps in ISO form) and kept as the first 16
 * bytes of the line's SHA-256 with its multiplicity: a million result rows take tens of MiB instead of
 * the rows' size. The fingerprint is the SHA-256 of the lines {@code <row digest in hex> <multiplicity>}
 * of every row whose multiplicity is not 0, sorted.
 */
final class NexmarkMultiset {
    /** A row's identity: the first 16 bytes of its line's SHA-256. */
    private record Digest(long high, long low) implements Comparable<Digest> {
        @Override
        public int compareTo(Digest o) {
            int c = Long.compareUnsigned(high, o.high);
            return c != 0 ? c : Long.compareUnsigned(low, o.low);
        }

        String hex() {
            return HexFormat.of().toHexDigits(high) + HexFormat.of().toHexDigits(low);
        }
    }

    /** What a result amounts to: its fingerprint, its rows (with multiplicity), rows removed more than added. */
    record Fingerprint(String sha256, long rows, long negativeRows) implements java.io.Serializable {
        static Fingerprint parse(String s) {
            String[] f = s.split(" ");
            return new Fingerprint(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]));
        }

        @Override
        public String toString() {
            return sha256 + " " + rows + " " + negativeRows;
        }
    }

    private final Map<Digest, Long> counts = new HashMap<>();
    private final MessageDigest sha256 = sha256();
    private long changes;

    /** Applies one change of the changelog. */
    void apply(Row row) {
        RowKind kind = row.getKind();
        boolean adds = kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER;
        add(render(row), adds ? 1 : -1);
    }

    /** Adds {@code delta} copies of the row rendered as {@code line} (removes them if negative). */
    void add(String line, long delta) {
        changes++;
        ByteBuffer d = ByteBuffer.wrap(sha256.digest(line.getBytes(StandardCharsets.UTF_8)));
        counts.merge(new Digest(d.getLong(), d.getLong()), delta, (a, b) -> a + b == 0 ? null : a + b);
    }

    long changes() {
        return changes;
    }

    Fingerprint fingerprint() {
        List<Digest> rows = new ArrayList<>(counts.keySet());
        rows.sort(null);
        long total = 0;
        long negative = 0;
        for (Digest row : rows) {
            long n = counts.get(row);
            total += n;
            negative += n < 0 ? 1 : 0;
            sha256.update((row.hex() + " " + n + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return new Fingerprint(HexFormat.of().formatHex(sha256.digest()), total, negative);
    }

    /** The canonical line of a row: the fields without the change kind. */
    static String render(Row row) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < row.getArity(); i++) {
            if (i > 0) {
                line.append('|');
            }
            Object field = row.getField(i);
            if (field == null) {
                line.append("\\N");
            } else if (field instanceof String s) {
                escape(s, line);
            } else {
                line.append(field);
            }
        }
        return line.toString();
    }

    private static void escape(String s, StringBuilder line) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\' -> line.append("\\\\");
                case '|' -> line.append("\\|");
                case '\n' -> line.append("\\n");
                case '\r' -> line.append("\\r");
                default -> line.append(c);
            }
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
