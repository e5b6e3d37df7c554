package io.lethe.bench.jobs;

import java.util.SplittableRandom;

/**
 * The text fields of Nexmark events: names, places, random words, bid channels and URLs, and the
 * padding field {@code extra}. Everything is drawn from the random source it is given, or from tables
 * built once from a fixed seed, so that an event's text depends on its number only.
 */
final class NexmarkText {
    /** The states the specification's queries filter on (q3: OR, ID, CA) are among them. */
    private static final String[] STATES = {"AZ", "CA", "ID", "OR", "WA", "WY"};
    private static final String[] CITIES = {"Tucson", "Sacramento", "Oakland", "Boise", "Eugene", "Salem",
        "Tacoma", "Spokane", "Laramie", "Casper"};
    private static final String[] FIRST_NAMES = {"Ada", "Ben", "Chloe", "Dan", "Eva", "Finn", "Greta", "Hugo",
        "Ines", "Jonas", "Kira"};
    private static final String[] LAST_NAMES = {"Adler", "Brandt", "Costa", "Dietz", "Egger", "Falk", "Graf",
        "Horn", "Ilic"};

    /** Half of all bids come through one of these four channels, the rest through one of 10,000 others. */
    private static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};
    private static final int CHANNELS = 10_000;
    private static final int HOT_CHANNEL_RATIO = 2;

    private static final int MIN_WORD = 3;
    /** Padding is cut from this fixed text: cheaper than drawing every character. */
    private static final String PADDING;
    private static final String[] HOT_URLS;
    private static final String[] CHANNEL_URLS;

    static {
        SplittableRandom fixed = new SplittableRandom(0x5EED_7E47L);
        StringBuilder padding = new StringBuilder(1 << 20);
        while (padding.length() < 1 << 20) {
            padding.append((char) ('a' + fixed.nextInt(26)));
        }
        PADDING = padding.toString();
        HOT_URLS = new String[HOT_CHANNELS.length];
        for (int i = 0; i < HOT_URLS.length; i++) {
            HOT_URLS[i] = itemUrl(fixed);
        }
        // Most channels carry their id in the URL (what the spec's q21 extracts), one in ten does not.
        CHANNEL_URLS = new String[CHANNELS];
        for (int i = 0; i < CHANNELS; i++) {
            String url = itemUrl(fixed);
            CHANNEL_URLS[i] = fixed.nextInt(10) == 0 ? url : url + "&channel_id=" + Math.abs(Integer.reverse(i));
        }
    }

    private NexmarkText() {}

    static String personName(SplittableRandom r) {
        return pick(FIRST_NAMES, r) + " " + pick(LAST_NAMES, r);
    }

    static String email(SplittableRandom r) {
        return word(r, 7, ' ') + "@" + word(r, 5, ' ') + ".com";
    }

    /** Four groups of four digits. */
    static String creditCard(SplittableRandom r) {
        return String.format("%04d %04d %04d %04d", r.nextInt(10_000), r.nextInt(10_000), r.nextInt(10_000),
                r.nextInt(10_000));
    }

    static String city(SplittableRandom r) {
        return pick(CITIES, r);
    }

    static String state(SplittableRandom r) {
        return pick(STATES, r);
    }

    /**
     * Random lower-case letters, 3 to {@code maxLength} - 1 of them, about one in 13 replaced by {@code gap};
     * trimmed, so words made with a space gap may come out shorter.
     */
    static String word(SplittableRandom r, int maxLength, char gap) {
        char[] chars = new char[MIN_WORD + r.nextInt(maxLength - MIN_WORD)];
        for (int i = 0; i < chars.length; i++) {
            chars[i] = r.nextInt(13) == 0 ? gap : (char) ('a' + r.nextInt(26));
        }
        return new String(chars).trim();
    }

    /**
     * Padding that brings an event of {@code usedBytes} to {@code averageBytes} on average: a length
     * uniform within 20 % of the shortfall, nothing if there is none.
     */
    static String extra(SplittableRandom r, int usedBytes, int averageBytes) {
        int shortfall = averageBytes - usedBytes;
        if (shortfall <= 0) {
            return "";
        }
        int spread = Math.round(shortfall * 0.2f);
        int length = shortfall - spread + (spread == 0 ? 0 : r.nextInt(2 * spread));
        int from = r.nextInt(PADDING.length() - length);
        return PADDING.substring(from, from + length);
    }

    /** A bid's channel and URL: {channel, url}. */
    static String[] channelAndUrl(SplittableRandom r) {
        if (r.nextInt(HOT_CHANNEL_RATIO) > 0) {
            int i = r.nextInt(HOT_CHANNELS.length);
            return new String[] {HOT_CHANNELS[i], HOT_URLS[i]};
        }
        int i = r.nextInt(CHANNELS);
        return new String[] {"channel-" + i, CHANNEL_URLS[i]};
    }

    private static String itemUrl(SplittableRandom r) {
        return "https://www.nexmark.com/" + word(r, 5, '_') + '/' + word(r, 5, '_') + '/' + word(r, 5, '_')
                + "/item.htm?query=1";
    }

    private static String pick(String[] values, SplittableRandom r) {
        return values[r.nextInt(values.length)];
    }
}
