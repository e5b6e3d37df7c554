import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes the Java enum {@code io.lethe.engine.Ticker} from the one list of the engine's counters, the
 * {@code LETHE_TICKERS} macro of {@code include/lethe/statistics.h}, so C++ and Java cannot disagree on
 * their order. Maven runs it in generate-sources with the JDK's source launcher:
 *
 * <pre>java GenerateTickers.java include/lethe/statistics.h target/generated-sources/tickers</pre>
 */
public final class GenerateTickers {
    private static final Pattern ENTRY =
            Pattern.compile("X\\(\\s*(k\\w+)\\s*,\\s*(\\w+)\\s*,\\s*\"((?:[^\"\\\\]|\\\\.)*)\"\\s*\\)");

    record Entry(String field, String doc) {}

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: GenerateTickers <statistics.h> <output source root>");
        }
        List<Entry> entries = parse(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8));
        Path out = Path.of(args[1], "io", "lethe", "engine", "Ticker.java");
        Files.createDirectories(out.getParent());
        String source = render(entries);
        if (!Files.exists(out) || !Files.readString(out, StandardCharsets.UTF_8).equals(source)) {
            Files.writeString(out, source, StandardCharsets.UTF_8);
        }
    }

    static List<Entry> parse(String header) {
        int start = header.indexOf("#define LETHE_TICKERS(X)");
        if (start < 0) {
            throw new IllegalStateException("no LETHE_TICKERS list in the header");
        }
        // The macro runs to the first line that does not end in a backslash.
        StringBuilder macro = new StringBuilder();
        for (String line : header.substring(start).split("\n")) {
            macro.append(line.replace("\\", " ")).append(' ');
            if (!line.stripTrailing().endsWith("\\")) {
                break;
            }
        }
        List<Entry> entries = new ArrayList<>();
        Matcher m = ENTRY.matcher(macro);
        while (m.find()) {
            entries.add(new Entry(m.group(2), m.group(3)));
        }
        if (entries.isEmpty()) {
            throw new IllegalStateException("LETHE_TICKERS holds no entry");
        }
        return entries;
    }

    static String render(List<Entry> entries) {
        StringBuilder s = new StringBuilder();
        s.append("package io.lethe.engine;\n\n")
                .append("/**\n")
                .append(" * The engine's counters, in the order of the native transfer. Generated at build time from the\n")
                .append(" * {@code LETHE_TICKERS} list of {@code include/lethe/statistics.h}: edit that list, not this file.\n")
                .append(" */\n")
                .append("public enum Ticker {\n");
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            s.append("    /** ").append(e.doc()).append(" */\n")
                    .append("    ").append(e.field().toUpperCase(Locale.ROOT))
                    .append("(\"").append(e.field().replace('_', '-')).append("\")")
                    .append(i + 1 < entries.size() ? ",\n" : ";\n");
        }
        s.append("\n    private final String metricName;\n\n")
                .append("    Ticker(String metricName) {\n")
                .append("        this.metricName = metricName;\n")
                .append("    }\n\n")
                .append("    /** The name in lower case with hyphens, as metric systems use it: {@code bytes-written-wal}. */\n")
                .append("    public String metricName() {\n")
                .append("        return metricName;\n")
                .append("    }\n")
                .append("}\n");
        return s.toString();
    }
}
