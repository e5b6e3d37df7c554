package io.lethe.examples;

import java.util.Objects;

/**
 * One click: an event id (repeated when a producer delivered the event twice), its event time, the
 * user and the page. A Flink POJO; its text form is {@code id,timestamp,user,page}.
 */
public class Click {
    public long id;
    public long timestamp;
    public long user;
    public int page;

    public Click() {}

    public Click(long id, long timestamp, long user, int page) {
        this.id = id;
        this.timestamp = timestamp;
        this.user = user;
        this.page = page;
    }

    /** The text form {@code id,timestamp,user,page}. */
    public String toCsv() {
        return id + "," + timestamp + "," + user + "," + page;
    }

    /** Parses {@link #toCsv()}; throws {@link IllegalArgumentException} naming the bad line. */
    public static Click parse(String line) {
        String[] f = line.trim().split(",");
        if (f.length != 4) {
            throw new IllegalArgumentException("A click is 'id,timestamp,user,page', not '" + line + "'");
        }
        try {
            return new Click(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), Integer.parseInt(f[3]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("A click is 'id,timestamp,user,page' (numbers), not '" + line + "'", e);
        }
    }

    /** A 64-bit mix of the click: summed over a result set, an order-free fingerprint of it. */
    public long fingerprint() {
        long x = id * 0x9E3779B97F4A7C15L + timestamp;
        x = (x ^ (x >>> 29)) * 0xBF58476D1CE4E5B9L + user;
        x = (x ^ (x >>> 32)) * 0x94D049BB133111EBL + page;
        return x ^ (x >>> 31);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Click c && c.id == id && c.timestamp == timestamp && c.user == user && c.page == page;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, timestamp, user, page);
    }

    @Override
    public String toString() {
        return toCsv();
    }
}
