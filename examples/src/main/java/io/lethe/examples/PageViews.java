package io.lethe.examples;

import java.util.Objects;

/**
 * Views of one page in one window: clicks and distinct users, keyed by the window's end (exclusive,
 * epoch milliseconds). A Flink POJO; its text form is {@code windowEnd,page,clicks,users}.
 */
public class PageViews {
    public long windowEnd;
    public int page;
    public long clicks;
    public long users;

    public PageViews() {}

    public PageViews(long windowEnd, int page, long clicks, long users) {
        this.windowEnd = windowEnd;
        this.page = page;
        this.clicks = clicks;
        this.users = users;
    }

    public String toCsv() {
        return windowEnd + "," + page + "," + clicks + "," + users;
    }

    public static PageViews parse(String line) {
        String[] f = line.trim().split(",");
        if (f.length != 4) {
            throw new IllegalArgumentException("Page views are 'windowEnd,page,clicks,users', not '" + line + "'");
        }
        return new PageViews(Long.parseLong(f[0]), Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]));
    }

    /** A 64-bit mix of the record: summed over a result set, an order-free fingerprint of it. */
    public long fingerprint() {
        long x = windowEnd * 0x9E3779B97F4A7C15L + page;
        x = (x ^ (x >>> 29)) * 0xBF58476D1CE4E5B9L + clicks;
        x = (x ^ (x >>> 32)) * 0x94D049BB133111EBL + users;
        return x ^ (x >>> 31);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PageViews p && p.windowEnd == windowEnd && p.page == page && p.clicks == clicks
                && p.users == users;
    }

    @Override
    public int hashCode() {
        return Objects.hash(windowEnd, page, clicks, users);
    }

    @Override
    public String toString() {
        return toCsv();
    }
}
