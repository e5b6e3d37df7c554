package io.lethe.flink;

import io.lethe.engine.ColumnFamilyOptions;
import io.lethe.engine.CompactionStyle;
import io.lethe.engine.Compression;
import io.lethe.engine.DbOptions;
import io.lethe.engine.MemoryBudget;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;

import java.time.Duration;
import java.util.List;

/**
 * The configuration options of the Lethe state backend, all under {@code state.backend.lethe.*}.
 * Select the backend with {@code state.backend.type: io.lethe.flink.LetheStateBackendFactory}.
 */
public final class LetheOptions {
    private LetheOptions() {}

    public static final ConfigOption<List<String>> LOCAL_DIRECTORIES =
            ConfigOptions.key("state.backend.lethe.localdir")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription(
                            "Local directories for the engine's files. If unset, the TaskManager's temporary"
                                    + " directories are used. Several directories spread operators round robin.");

    public static final ConfigOption<Boolean> USE_MANAGED_MEMORY =
            ConfigOptions.key("state.backend.lethe.memory.managed")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Reserve the engines' memory from the slot's managed memory: all Lethe engines of a"
                                    + " slot share one memory budget of that size (page cache, write buffers, open"
                                    + " tables' index and filters). When false, write-buffer-size and page-cache-size"
                                    + " apply per operator, and open tables are not bounded.");

    public static final ConfigOption<Double> WRITE_BUFFER_RATIO =
            ConfigOptions.key("state.backend.lethe.memory.write-buffer-ratio")
                    .doubleType()
                    .defaultValue(0.5)
                    .withDescription("Fraction of the managed memory that write buffers (memtables) of all engines in"
                            + " a slot may take together, in (0, 1); past it, the engine holding the largest"
                            + " memtable flushes it.");

    public static final ConfigOption<Boolean> BOUND_OPEN_TABLES =
            ConfigOptions.key("state.backend.lethe.memory.bound-open-tables")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("With managed memory: keep the open tables' index and filters within the"
                            + " budget (tables past their share go through a table cache bounded by bytes, and are"
                            + " opened again, whole index and filters read, when they left it). When false, every"
                            + " table stays open: its memory is counted and squeezes the page cache, but may take"
                            + " the slot past its managed memory when the state's index and filters outgrow it.");

    public static final ConfigOption<Duration> HEAP_TRIM_INTERVAL =
            ConfigOptions.key("state.backend.lethe.memory.heap-trim-interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription("After flushes and compactions, and when an engine closes, the memory the C"
                            + " allocator holds free goes back to the operating system (glibc's malloc_trim), at"
                            + " most once per this interval in the TaskManager; also when the page cache gave"
                            + " growing memtables a sixteenth of the managed memory, then at most once per second."
                            + " Without it, the buffers that compactions free, the pages the cache gives up and"
                            + " the memory of engines closed on a failover or rescale stay resident. 0 turns it"
                            + " off (at most 1 day).");

    public static final ConfigOption<MemorySize> WRITE_BUFFER_SIZE =
            ConfigOptions.key("state.backend.lethe.write-buffer-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("64mb"))
                    .withDescription(
                            "Memory for all memtables of one operator's engine before they are flushed, when"
                                    + " managed memory is not used.");

    public static final ConfigOption<MemorySize> PAGE_CACHE_SIZE =
            ConfigOptions.key("state.backend.lethe.page-cache-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("32mb"))
                    .withDescription("Capacity of one engine's page cache, when managed memory is not used.");

    public static final ConfigOption<Integer> MAX_OPEN_FILES =
            ConfigOptions.key("state.backend.lethe.files.open")
                    .intType()
                    .defaultValue(-1)
                    .withDescription("Table files one operator's engine keeps open at most, when managed memory is"
                            + " not used: -1 keeps every table open (its index and filters stay in memory and a"
                            + " read takes no lock of the table cache), or at least 16. With managed memory the"
                            + " budget bounds open tables instead (see memory.bound-open-tables).");

    public static final ConfigOption<Integer> SIZE_RATIO =
            ConfigOptions.key("state.backend.lethe.size-ratio")
                    .intType()
                    .defaultValue(10)
                    .withDescription("Size ratio T between adjacent LSM levels (at least 2).");

    public static final ConfigOption<MemorySize> PAGE_SIZE =
            ConfigOptions.key("state.backend.lethe.page-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("4kb"))
                    .withDescription("Target size of a data page in the engine's files.");

    public static final ConfigOption<String> PAGES_PER_TILE =
            ConfigOptions.key("state.backend.lethe.pages-per-tile")
                    .stringType()
                    .defaultValue("1")
                    .withDescription(
                            "Pages per delete tile (h) of every column family but those of states with a TTL (see"
                                    + " ttl.pages-per-tile): an integer in [1, 4096] or 'auto'. 1 is the classic"
                                    + " layout; larger values make deletes by delete key (expiry) cheaper, since"
                                    + " whole pages are dropped without being read, and point lookups probe more"
                                    + " Bloom filters. 'auto' chooses h for every new file from the lookups and"
                                    + " deletes by delete key observed.");

    public static final ConfigOption<String> TTL_PAGES_PER_TILE =
            ConfigOptions.key("state.backend.lethe.ttl.pages-per-tile")
                    .stringType()
                    .defaultValue("8")
                    .withDescription(
                            "Pages per delete tile of the states with a TTL, in place of pages-per-tile: an"
                                    + " integer in [1, 4096] or 'auto'. A tile orders its pages by expiry time, so"
                                    + " expired entries leave as whole pages that are dropped without being read,"
                                    + " where with 1 page per tile compaction rewrites the pages around them.");

    public static final ConfigOption<Integer> BLOOM_BITS_PER_KEY =
            ConfigOptions.key("state.backend.lethe.bloom-bits-per-key")
                    .intType()
                    .defaultValue(10)
                    .withDescription("Bloom filter bits per key in every page (0 disables the filters).");

    public static final ConfigOption<Compression> COMPRESSION =
            ConfigOptions.key("state.backend.lethe.compression")
                    .enumType(Compression.class)
                    .defaultValue(Compression.LZ4)
                    .withDescription(
                            "Compression of the data pages in the engine's files, and so of checkpoints: LZ4 (fast,"
                                    + " the default), ZSTD (smaller, more CPU on writes) or NONE. Each page is"
                                    + " compressed on its own; a page that would not shrink by an eighth is"
                                    + " stored as it is. Files written before a change stay readable.");

    public static final ConfigOption<Compression> BOTTOMMOST_COMPRESSION =
            ConfigOptions.key("state.backend.lethe.bottommost-compression")
                    .enumType(Compression.class)
                    .defaultValue(Compression.ZSTD)
                    .withDescription(
                            "Compression of the files compaction writes to the last non-empty level, where most"
                                    + " of the state lives: ZSTD (the default: smaller files and checkpoints for"
                                    + " some CPU in compactions to that level), LZ4 or NONE. Files written to the"
                                    + " levels above it, by flushes and the compactions that keep up with them, use"
                                    + " state.backend.lethe.compression. For no compression at all, set both to"
                                    + " NONE.");

    public static final ConfigOption<Compression> FLUSH_COMPRESSION =
            ConfigOptions.key("state.backend.lethe.flush-compression")
                    .enumType(Compression.class)
                    .noDefaultValue()
                    .withDescription(
                            "Compression of the level-0 files flushes write: NONE, LZ4 or ZSTD; unset: as"
                                    + " state.backend.lethe.compression. Compaction soon rewrites a flushed file"
                                    + " into level 1, compressed as that level wants, so its compression is CPU"
                                    + " spent on the flush a checkpoint waits for, for bytes that live a short"
                                    + " time; NONE makes that flush cheaper, for larger level-0 files (which an"
                                    + " incremental checkpoint taken meanwhile uploads as they are).");

    public static final ConfigOption<MemorySize> TARGET_FILE_SIZE =
            ConfigOptions.key("state.backend.lethe.target-file-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("8mb"))
                    .withDescription("Target size of a file written by compaction.");

    public static final ConfigOption<Boolean> DYNAMIC_LEVEL_SIZE =
            ConfigOptions.key("state.backend.lethe.dynamic-level-size")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "true: level targets follow the largest level: each level above the last targets a"
                                    + " size-ratio-th of the one below, so the last level holds most of the state"
                                    + " and the files take little more than the live data (RocksDB's"
                                    + " level_compaction_dynamic_level_bytes), for more compaction writes. Suits"
                                    + " state that is rewritten or expires as a whole, such as windows. false (as"
                                    + " Flink's RocksDB backend): level 1 holds level1-size and level i"
                                    + " size-ratio^(i-1) times as much. A column family keeps the choice it was"
                                    + " created with, also across restores of native checkpoints.");

    public static final ConfigOption<MemorySize> LEVEL1_SIZE =
            ConfigOptions.key("state.backend.lethe.level1-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("32mb"))
                    .withDescription(
                            "With dynamic-level-size: the most the level receiving level 0 targets. Without:"
                                    + " the capacity of level 1; level i holds size-ratio^(i-1) times as much.");

    public static final ConfigOption<Duration> DELETE_PERSISTENCE_THRESHOLD =
            ConfigOptions.key("state.backend.lethe.delete-persistence-threshold")
                    .durationType()
                    .defaultValue(Duration.ofHours(1))
                    .withDescription(
                            "FADE's delete persistence threshold D_th: every tombstone the backend writes (a"
                                    + " cleared or removed state entry), together with the data it deletes, is"
                                    + " physically gone from the local files within this time of the delete, also"
                                    + " when the job is idle. Shorter thresholds mean more compaction work; the"
                                    + " engine keeps the bound by flushing and compacting files whose tombstones"
                                    + " outlived their level's share of it. 0 turns FADE off (classic compaction,"
                                    + " like RocksDB: tombstones may stay for as long as their level is not"
                                    + " compacted). Otherwise at least 1 ms.");

    public static final ConfigOption<ColumnFamilyOptions.FadeFilePick> FADE_FILE_PICK =
            ConfigOptions.key("state.backend.lethe.fade.file-pick")
                    .enumType(ColumnFamilyOptions.FadeFilePick.class)
                    .defaultValue(ColumnFamilyOptions.FadeFilePick.MOST_DELETES)
                    .withDescription(
                            "Which file a compaction of a full level takes while FADE is on: MIN_OVERLAP (least"
                                    + " work, the classic choice), MOST_DELETES (the file whose tombstones"
                                    + " invalidate the most entries: space is reclaimed first) or OLDEST_DELETE"
                                    + " (the file with the oldest tombstone).");

    public static final ConfigOption<Boolean> AVOID_BLIND_DELETES =
            ConfigOptions.key("state.backend.lethe.avoid-blind-deletes")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Before writing a tombstone, probe the memtables and the files' Bloom filters and"
                                    + " write nothing when the entry cannot exist (for example clearing state that"
                                    + " was never set). Costs a filter probe per delete.");

    public static final ConfigOption<Boolean> COMPACT_IN_MEMORY =
            ConfigOptions.key("state.backend.lethe.compact-in-memory")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "When a memtable fills, first compact it in memory with what earlier ones left"
                                    + " there (dropping overwritten versions, cleared state, expired windows and TTL"
                                    + " entries), and keep what survives in memory when it fits a quarter of the"
                                    + " write buffers and holds no tombstone. Only a larger remainder, one with"
                                    + " tombstones, and checkpoints write files: state that lives shorter than a"
                                    + " checkpoint interval (fired windows) is then never written locally.");

    public static final ConfigOption<Boolean> WINDOW_EXPIRY =
            ConfigOptions.key("state.backend.lethe.window-expiry")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Expire the contents of event-time windows through the engine's horizon: entries carry"
                                    + " their window's end as delete key and leave by page drops once the window's"
                                    + " cleanup timer has fired, without a tombstone per key. Applies to Flink's"
                                    + " WindowOperator with non-merging event-time windows and a finite allowed"
                                    + " lateness, learned and checked on the operator's timers; other operators keep"
                                    + " the ordinary path. The per-state gauge lethe.expiry.<state> and a log line"
                                    + " say whether it is active and why not.");

    public static final ConfigOption<CompactionStyle> WINDOW_COMPACTION =
            ConfigOptions.key("state.backend.lethe.window-compaction")
                    .enumType(CompactionStyle.class)
                    .defaultValue(CompactionStyle.TIME_ORDERED)
                    .withDescription(
                            "How the column family of window contents is compacted while window expiry is active"
                                    + " (state.backend.lethe.window-expiry): TIME_ORDERED (the default) keeps every"
                                    + " file a sorted run of its own, leaving when the horizon has dropped its pages,"
                                    + " and merges only files smaller than level1-size with their neighbours, so a"
                                    + " window is written once rather than merged down the levels until it expires;"
                                    + " LEVELED compacts it as every other state. A state keeps the style its column"
                                    + " family was created with, also across restores of native checkpoints.");

    /** Where timers are kept. */
    public enum TimerServiceFactory {
        /** In the engine, one column family per timer queue. */
        LETHE,
        /** On the JVM heap. */
        HEAP
    }

    public static final ConfigOption<TimerServiceFactory> TIMER_SERVICE_FACTORY =
            ConfigOptions.key("state.backend.lethe.timer-service.factory")
                    .enumType(TimerServiceFactory.class)
                    .defaultValue(TimerServiceFactory.LETHE)
                    .withDescription("Where timers are kept: LETHE (in the engine, one column family per timer queue;"
                            + " each key group caches its next timers on the heap, and fired timers leave by the"
                            + " column family's horizon, without a tombstone each) or HEAP (on the JVM heap, in the"
                            + " checkpoint's metadata). A native checkpoint restores only with the choice it was"
                            + " taken with; a canonical savepoint moves between them.");

    public static final ConfigOption<Boolean> ASYNC_STATE_EXECUTOR =
            ConfigOptions.key("state.backend.lethe.async-state.executor")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Whether operators with asynchronous state (Flink's State V2, enableAsyncState())"
                            + " get Lethe's own backend for it: requests served in batches, and state TTL of"
                            + " asynchronous state honoured. false: Flink runs them through its synchronous"
                            + " adaptor on Lethe's ordinary backend, one request at a time, where the TTL of"
                            + " asynchronous state is ignored. Not yet the default: Flink's asynchronous window"
                            + " operator gives wrong results for windows that overlap (sliding) when requests are"
                            + " served in batches.");

    public static final ConfigOption<Integer> ASYNC_STATE_INLINE_BATCH_SIZE =
            ConfigOptions.key("state.backend.lethe.async-state.inline-batch-size")
                    .intType()
                    .defaultValue(Integer.MAX_VALUE)
                    .withDescription("With Lethe's asynchronous backend: batches of state requests up to this size"
                            + " are served by the task thread itself (their multi-gets and write batch) when no batch"
                            + " is in flight. Larger batches, and any batch while one is in flight, go to a thread of"
                            + " the backend that serves them in the order they were issued while the task thread goes"
                            + " on with other records; the executor then reports itself fully loaded while one batch"
                            + " is served and another waits. The default (2147483647) has the task thread serve every"
                            + " batch: on two cores that was fastest for Flink SQL's operators (batches of 3-4"
                            + " requests) and for full batches of 1,000, with state in memory and beyond the cache."
                            + " Lower it (e.g. 100) where a slot has a core to spare; 0 hands every batch over.");

    public static final ConfigOption<Integer> MULTI_GET_THREADS =
            ConfigOptions.key("state.backend.lethe.multi-get.threads")
                    .intType()
                    .defaultValue(1)
                    .withDescription("Threads of each engine that help a multi-get (the point reads of a batch of"
                            + " asynchronous state requests, one per column family) through its keys beside the"
                            + " thread that serves it, so that reads that miss the page cache wait on the disk"
                            + " together. 0: that thread alone.");

    public static final ConfigOption<Integer> CHECKPOINT_TRANSFER_THREADS =
            ConfigOptions.key("state.backend.lethe.checkpoint.transfer.thread.num")
                    .intType()
                    .defaultValue(4)
                    .withDescription("How many files of a native checkpoint are uploaded at a time, and of a restore"
                            + " downloaded (as state.backend.rocksdb.checkpoint.transfer.thread.num); the states'"
                            + " copies of the memtables are written on the same threads, each uploaded when written."
                            + " 1 moves them one after another on the checkpoint's own thread.");

    public static final ConfigOption<Boolean> CHECKPOINT_COPY_MEMTABLES =
            ConfigOptions.key("state.backend.lethe.checkpoint.copy-memtables")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription("true: a native checkpoint takes the engine's memtables as they are in its"
                            + " synchronous part (which then costs links and references only) and copies what"
                            + " lives in them into a table of the checkpoint in its asynchronous part; data that"
                            + " dies in memory (fired windows, cleared state) never reaches local disk, at the"
                            + " cost of a longer asynchronous part and of uploading a memtable again at each"
                            + " checkpoint it lives through (bounded: once the copies since the last flush reach"
                            + " a quarter of the write buffer, the memtables go to files in the background, which"
                            + " the next checkpoint links). false: the synchronous part"
                            + " flushes the memtables, as RocksDB's backend does.");

    public static final ConfigOption<Integer> TIMER_SERVICE_CACHE_SIZE =
            ConfigOptions.key("state.backend.lethe.timer-service.cache-size")
                    .intType()
                    .defaultValue(128)
                    .withDescription("With LETHE timers: the timers each key group keeps on the heap, its next ones"
                            + " (as state.backend.rocksdb.timer-service.cache-size).");

    public static final ConfigOption<Compression> TIMER_SERVICE_COMPRESSION =
            ConfigOptions.key("state.backend.lethe.timer-service.compression")
                    .enumType(Compression.class)
                    .defaultValue(Compression.ZSTD)
                    .withDescription("With LETHE timers: the compression of the timer queues' column families, on"
                            + " every level: ZSTD (the default), LZ4 or NONE. Timer rows are short and alike (key"
                            + " group, time, key, window), are written once and are read in order when they fire:"
                            + " ZSTD stores them in about 0.6 of LZ4's bytes, at little CPU for so few bytes. The"
                            + " state's own column families follow state.backend.lethe.compression and"
                            + " state.backend.lethe.bottommost-compression.");

    public static final ConfigOption<Boolean> TIMER_SERVICE_COUNT_PENDING =
            ConfigOptions.key("state.backend.lethe.timer-service.count-pending")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("With LETHE timers: count each queue's pending timers exactly, for the gauge"
                            + " lethe.timers.<queue>.pending. Costs a read of the engine for each timer added or"
                            + " removed beyond its key group's cache and not written lately, and a read of every"
                            + " pending timer when a queue opens (after a restore).");

    public static final ConfigOption<Boolean> VERIFY_CHECKSUMS =
            ConfigOptions.key("state.backend.lethe.verify-checksums")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription("Verify every page's CRC32C when it is read from a file.");

    /**
     * The engine options one operator's engine opens with. With a memory budget (the slot's managed
     * memory), the budget holds the page cache and bounds the write buffers of every engine on it;
     * writeBufferBytes still caps this engine's memtables, and pageCacheBytes is not used.
     */
    static DbOptions dbOptions(ReadableConfig config, long writeBufferBytes, long pageCacheBytes,
            MemoryBudget budget) {
        try {
            ColumnFamilyOptions cf = columnFamilyOptions(config);
            return DbOptions.builder()
                    .useWal(false) // durability comes from Flink's checkpoints
                    .writeBufferSizeBytes(writeBufferBytes)
                    .pageCacheBytes(pageCacheBytes)
                    .maxOpenFiles(config.get(MAX_OPEN_FILES))
                    .memoryBudget(budget)
                    .verifyChecksums(config.get(VERIFY_CHECKSUMS))
                    .multiGetThreads(config.get(MULTI_GET_THREADS))
                    .avoidBlindDeletes(config.get(AVOID_BLIND_DELETES))
                    .compactInMemory(config.get(COMPACT_IN_MEMORY))
                    .heapTrimIntervalMillis(config.get(HEAP_TRIM_INTERVAL).toMillis())
                    .defaultColumnFamilyOptions(cf)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new LetheConfigurationException("Invalid Lethe state backend option: " + e.getMessage(), e);
        }
    }

    static ColumnFamilyOptions columnFamilyOptions(ReadableConfig config) {
        try {
            return ColumnFamilyOptions.builder()
                    .sizeRatio(config.get(SIZE_RATIO))
                    .pageSizeBytes(Math.toIntExact(config.get(PAGE_SIZE).getBytes()))
                    .pagesPerTile(pagesPerTile(config, PAGES_PER_TILE))
                    .bloomBitsPerKey(config.get(BLOOM_BITS_PER_KEY))
                    .targetFileSizeBytes(config.get(TARGET_FILE_SIZE).getBytes())
                    .dynamicLevelBytes(config.get(DYNAMIC_LEVEL_SIZE))
                    .level1Bytes(config.get(LEVEL1_SIZE).getBytes())
                    .deletePersistenceThreshold(config.get(DELETE_PERSISTENCE_THRESHOLD))
                    .fadeFilePick(config.get(FADE_FILE_PICK))
                    .compression(config.get(COMPRESSION))
                    .bottommostCompression(config.get(BOTTOMMOST_COMPRESSION))
                    .flushCompression(config.getOptional(FLUSH_COMPRESSION).orElse(null))
                    .build();
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new LetheConfigurationException("Invalid Lethe state backend option: " + e.getMessage(), e);
        }
    }

    /** The options of a state with a TTL: {@code base} with the TTL states' pages per tile. */
    static ColumnFamilyOptions ttlColumnFamilyOptions(ReadableConfig config, ColumnFamilyOptions base) {
        return base.toBuilder().pagesPerTile(pagesPerTile(config, TTL_PAGES_PER_TILE)).build();
    }

    /** The options of window contents while window expiry is active: {@code base} with the window compaction. */
    static ColumnFamilyOptions windowColumnFamilyOptions(ReadableConfig config, ColumnFamilyOptions base) {
        return base.toBuilder().compactionStyle(config.get(WINDOW_COMPACTION)).build();
    }

    /** The options of a timer queue kept in the engine: {@code base} with the timers' compression. */
    static ColumnFamilyOptions timerColumnFamilyOptions(ReadableConfig config, ColumnFamilyOptions base) {
        Compression c = config.get(TIMER_SERVICE_COMPRESSION);
        return base.toBuilder().compression(c).bottommostCompression(c).flushCompression(c).build();
    }

    /** Validates every option now, so a bad value fails at configuration time, naming the key. */
    static void validate(ReadableConfig config) {
        checkRange(config, SIZE_RATIO, 2, 1000);
        checkRange(config, TIMER_SERVICE_CACHE_SIZE, 1, 1 << 20);
        checkRange(config, CHECKPOINT_TRANSFER_THREADS, 1, 64);
        checkRange(config, MULTI_GET_THREADS, 0, 64);
        checkRange(config, ASYNC_STATE_INLINE_BATCH_SIZE, 0, Integer.MAX_VALUE);
        config.get(TIMER_SERVICE_FACTORY); // an unknown choice fails here, naming the key
        int openFiles = config.get(MAX_OPEN_FILES);
        if (openFiles != -1 && (openFiles < 16 || openFiles > 1 << 20)) {
            throw invalid(MAX_OPEN_FILES, openFiles, "-1 (every table open) or an integer in [16, 1048576]");
        }
        pagesPerTile(config, PAGES_PER_TILE);
        pagesPerTile(config, TTL_PAGES_PER_TILE);
        checkRange(config, BLOOM_BITS_PER_KEY, 0, 64);
        config.get(COMPRESSION); // an unknown codec fails here, naming the key
        config.get(BOTTOMMOST_COMPRESSION);
        config.get(FLUSH_COMPRESSION);
        config.get(TIMER_SERVICE_COMPRESSION);
        checkBytes(config, PAGE_SIZE, 64, 16L << 20);
        checkBytes(config, TARGET_FILE_SIZE, 4096, 1L << 40);
        checkBytes(config, LEVEL1_SIZE, 4096, 1L << 50);
        checkBytes(config, WRITE_BUFFER_SIZE, 4096, 1L << 40);
        checkBytes(config, PAGE_CACHE_SIZE, 0, 1L << 44);
        Duration threshold = config.get(DELETE_PERSISTENCE_THRESHOLD);
        if (threshold.isNegative() || (!threshold.isZero() && threshold.compareTo(Duration.ofMillis(1)) < 0)) {
            throw invalid(DELETE_PERSISTENCE_THRESHOLD, threshold, "0 (off) or a duration of at least 1 ms");
        }
        Duration trim = config.get(HEAP_TRIM_INTERVAL);
        if (trim.isNegative() || trim.compareTo(Duration.ofDays(1)) > 0) {
            throw invalid(HEAP_TRIM_INTERVAL, trim, "0 (off) or a duration of at most 1 day");
        }
        double ratio = config.get(WRITE_BUFFER_RATIO);
        if (!(ratio > 0 && ratio < 1)) {
            throw invalid(WRITE_BUFFER_RATIO, ratio, "a number in (0, 1)");
        }
    }

    /** The engine's pages per tile: 1..4096, or {@link ColumnFamilyOptions#PAGES_PER_TILE_AUTO} for "auto". */
    static int pagesPerTile(ReadableConfig config, ConfigOption<String> option) {
        String v = config.get(option).trim();
        if (v.equalsIgnoreCase("auto")) {
            return ColumnFamilyOptions.PAGES_PER_TILE_AUTO;
        }
        try {
            int h = Integer.parseInt(v);
            if (h >= 1 && h <= 4096) {
                return h;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw invalid(option, v, "an integer in [1, 4096] or 'auto'");
    }

    private static void checkRange(ReadableConfig config, ConfigOption<Integer> option, int min, int max) {
        int v = config.get(option);
        if (v < min || v > max) {
            throw invalid(option, v, "an integer in [" + min + ", " + max + "]");
        }
    }

    private static void checkBytes(ReadableConfig config, ConfigOption<MemorySize> option, long min, long max) {
        MemorySize v = config.get(option);
        if (v.getBytes() < min || v.getBytes() > max) {
            throw invalid(option, v.toHumanReadableString(),
                    "a size in [" + new MemorySize(min).toHumanReadableString() + ", "
                            + new MemorySize(max).toHumanReadableString() + "]");
        }
    }

    /**
     * Rejects keys under {@code state.backend.lethe.} that are not options of this backend: a
     * misspelt option would otherwise be ignored silently (a misspelt delete persistence threshold
     * would leave deletes unbounded).
     */
    static void checkKnownKeys(ReadableConfig config, List<ConfigOption<?>> options) {
        List<String> known = options.stream().map(ConfigOption::key).toList();
        for (String key : config.toMap().keySet()) {
            if (key.startsWith(PREFIX) && !known.contains(key)) {
                String closest = known.stream().filter(k -> k.startsWith(PREFIX))
                        .min(java.util.Comparator.comparingInt(k -> editDistance(k, key))).orElse(null);
                throw new LetheConfigurationException("Unknown option " + key + " of the Lethe state backend"
                        + (closest != null && editDistance(closest, key) <= 4 ? ": did you mean " + closest + "?" : ".")
                        + " The options are listed in docs/configuration.md.");
            }
        }
    }

    /** The prefix of every option of this backend. */
    static final String PREFIX = "state.backend.lethe.";

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(substitute, Math.min(prev[j], cur[j - 1]) + 1);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    private static IllegalConfigurationException invalid(ConfigOption<?> option, Object value, String expected) {
        return new LetheConfigurationException(
                "Invalid value " + value + " for " + option.key() + ": expected " + expected + ".");
    }
}
