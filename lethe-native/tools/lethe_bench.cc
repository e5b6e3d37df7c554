// lethe_bench: the engine's native benchmark tool, in the manner of RocksDB's
// db_bench. Runs a list of benchmarks against one database and prints
// throughput, latency percentiles, write amplification, space amplification
// and the per-level layout.
//
//   lethe_bench --benchmarks=fillrandom,readrandom --num=1000000
//
// Benchmarks: fillseq, fillrandom, overwrite, appendrandom (merges to one of
// --groups keys, as a window operator appends to its windows), readrandom, readmissing,
// deleterandom, seekrandom (seek + --seek_nexts), scanrandom (every entry of a
// random range of --seek_nexts keys), multireadrandom (MultiGet
// batches of --batch_size keys, counted per key), readseq, ycsbdelete (the
// delete-heavy YCSB-A variant: --delete_percent, FADE with --dth_ops in
// logical time); and the steps flush (memtables to level 0), compact
// (everything to the last level) and deleteranges (10 keys in every 100 by
// range deletes).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "lethe/db.h"
#include "lethe/env.h"

namespace {

struct Flags {
  std::string benchmarks = "fillrandom,readrandom,readmissing,overwrite,deleterandom,seekrandom";
  int64_t num = 1000000;
  int64_t reads = -1;  // -1: num
  int key_size = 16;
  int value_size = 100;
  int seek_nexts = 10;
  int batch_size = 100;        // multireadrandom: keys per MultiGet
  int multi_get_threads = 1;   // helpers of a MultiGet batch
  int threads = 1;  // reader threads of readrandom, readmissing and seekrandom
  std::string db;
  bool use_existing_db = false;
  int64_t write_buffer_size = 64 << 20;
  int64_t page_cache_bytes = 32 << 20;
  int64_t memory_budget = 0;  // bytes of a MemoryBudget (write buffers half of it); 0: the two sizes above
  int64_t page_size = 4096;
  int pages_per_tile = 1;
  int bloom_bits = 10;
  int size_ratio = 10;
  bool dynamic_level_bytes = false;
  bool use_wal = false;
  bool compact_in_memory = true;  // without a WAL
  bool sync = false;
  uint64_t seed = 42;
  bool histogram = false;
  bool stats = false;
  int delete_percent = 5;  // ycsbdelete: share of all operations that are point deletes
  int64_t groups = 20000;  // appendrandom: the keys appended to
  int64_t dth_ops = 0;     // FADE's D_th in operations (logical clock: 1 µs per op); 0 = off
  std::string fade_pick = "SD";  // FADE's saturation file choice: SO, SD or DD
  std::string compression = "lz4";  // pages: none, lz4 or zstd
  std::string bottommost_compression;  // the last level's pages (and checkpoint images); empty: as above
  std::string flush_compression;  // level 0's pages, as flushes write them; empty: as compression
};

[[noreturn]] void Usage(const char* error) {
  std::fprintf(stderr,
               "lethe_bench: %s\n"
               "usage: lethe_bench [--benchmarks=a,b,...] [--num=N] [--reads=N] [--key_size=16]\n"
               "  [--value_size=100] [--seek_nexts=10] [--batch_size=100] [--multi_get_threads=1] [--threads=1 (readers)] [--db=DIR] [--use_existing_db=0|1]\n"
               "  [--write_buffer_size=BYTES] [--page_cache_bytes=BYTES] [--memory_budget=BYTES] [--page_size=BYTES]\n"
               "  [--pages_per_tile=H] [--bloom_bits=10] [--size_ratio=10] [--dynamic_level_bytes=0|1] [--use_wal=0|1] [--compact_in_memory=0|1]\n"
               "  [--sync=0|1] [--seed=N] [--histogram=0|1] [--stats=0|1]\n"
               "  [--delete_percent=5] [--dth_ops=N (FADE threshold in operations; 0 = off)]\n"
               "  [--fade_pick=SO|SD|DD] [--compression=none|lz4|zstd] [--bottommost_compression=none|lz4|zstd]\n"
               "  [--flush_compression=none|lz4|zstd] [--groups=20000 (appendrandom's keys)]\n"
               "benchmarks: fillseq fillrandom overwrite appendrandom readrandom readmissing deleterandom\n"
               "  seekrandom scanrandom multireadrandom readseq ycsbdelete; steps: flush compact deleteranges checkpoint\n",
               error);
  std::exit(2);
}

lethe::Compression CompressionOf(const std::string& name) {
  return name == "none" ? lethe::Compression::kNone : name == "zstd" ? lethe::Compression::kZSTD : lethe::Compression::kLZ4;
}

int64_t ParseInt(const std::string& name, const std::string& v) {
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0') Usage(("bad value for --" + name + ": " + v).c_str());
  return x;
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) Usage(("bad argument: " + a).c_str());
    std::string name = a.substr(2, eq - 2), v = a.substr(eq + 1);
    if (name == "benchmarks") f.benchmarks = v;
    else if (name == "num") f.num = ParseInt(name, v);
    else if (name == "reads") f.reads = ParseInt(name, v);
    else if (name == "key_size") f.key_size = static_cast<int>(ParseInt(name, v));
    else if (name == "value_size") f.value_size = static_cast<int>(ParseInt(name, v));
    else if (name == "seek_nexts") f.seek_nexts = static_cast<int>(ParseInt(name, v));
    else if (name == "batch_size") f.batch_size = static_cast<int>(ParseInt(name, v));
    else if (name == "multi_get_threads") f.multi_get_threads = static_cast<int>(ParseInt(name, v));
    else if (name == "threads") f.threads = static_cast<int>(ParseInt(name, v));
    else if (name == "db") f.db = v;
    else if (name == "use_existing_db") f.use_existing_db = ParseInt(name, v) != 0;
    else if (name == "write_buffer_size") f.write_buffer_size = ParseInt(name, v);
    else if (name == "page_cache_bytes") f.page_cache_bytes = ParseInt(name, v);
    else if (name == "memory_budget") f.memory_budget = ParseInt(name, v);
    else if (name == "page_size") f.page_size = ParseInt(name, v);
    else if (name == "pages_per_tile") f.pages_per_tile = static_cast<int>(ParseInt(name, v));
    else if (name == "bloom_bits") f.bloom_bits = static_cast<int>(ParseInt(name, v));
    else if (name == "size_ratio") f.size_ratio = static_cast<int>(ParseInt(name, v));
    else if (name == "dynamic_level_bytes") f.dynamic_level_bytes = ParseInt(name, v) != 0;
    else if (name == "use_wal") f.use_wal = ParseInt(name, v) != 0;
    else if (name == "compact_in_memory") f.compact_in_memory = ParseInt(name, v) != 0;
    else if (name == "sync") f.sync = ParseInt(name, v) != 0;
    else if (name == "seed") f.seed = static_cast<uint64_t>(ParseInt(name, v));
    else if (name == "histogram") f.histogram = ParseInt(name, v) != 0;
    else if (name == "stats") f.stats = ParseInt(name, v) != 0;
    else if (name == "delete_percent") f.delete_percent = static_cast<int>(ParseInt(name, v));
    else if (name == "groups") f.groups = ParseInt(name, v);
    else if (name == "dth_ops") f.dth_ops = ParseInt(name, v);
    else if (name == "fade_pick") f.fade_pick = v;
    else if (name == "compression") f.compression = v;
    else if (name == "bottommost_compression") f.bottommost_compression = v;
    else if (name == "flush_compression") f.flush_compression = v;
    else Usage(("unknown flag --" + name).c_str());
  }
  if (f.num <= 0 || f.key_size < 8 || f.value_size < 0 || f.value_size > (1 << 19) || f.seek_nexts < 0 || f.threads < 1 ||
      f.batch_size < 1 || f.multi_get_threads < 0) Usage("out-of-range flag value");
  if (f.fade_pick != "SO" && f.fade_pick != "SD" && f.fade_pick != "DD") Usage("--fade_pick must be SO, SD or DD");
  auto codec = [](const std::string& c) { return c == "none" || c == "lz4" || c == "zstd"; };
  if (!codec(f.compression)) Usage("--compression must be none, lz4 or zstd");
  if (!f.bottommost_compression.empty() && !codec(f.bottommost_compression)) {
    Usage("--bottommost_compression must be none, lz4 or zstd");
  }
  if (!f.flush_compression.empty() && !codec(f.flush_compression)) Usage("--flush_compression must be none, lz4 or zstd");
  if (f.delete_percent < 0 || f.delete_percent > 50) Usage("--delete_percent must be in [0, 50]");
  if (f.reads < 0) f.reads = f.num;
  if (f.db.empty()) f.db = "/tmp/lethe_bench-" + std::to_string(getpid());
  return f;
}

// splitmix64: fast and deterministic.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t Uniform(uint64_t n) { return Next() % n; }

 private:
  uint64_t s_;
};

// One thread's state while it runs a benchmark.
struct Worker {
  explicit Worker(uint64_t seed) : rng(seed) {}
  Rng rng;
  double bytes = 0;
  int64_t found = 0;
  std::vector<float> latencies_us;
  lethe::Status status;
};

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Benchmark {
 public:
  explicit Benchmark(Flags flags) : f_(std::move(flags)), live_(static_cast<size_t>(f_.num), false) {
    Rng vr(f_.seed ^ 0xabcdef);
    // Values are slices of a pool whose every 100-byte stretch is half random
    // bytes, half repeated: each value differs, and pages compress about 50 %.
    value_pool_.resize(size_t{1} << 20);
    for (size_t i = 0; i < value_pool_.size(); i++) {
      value_pool_[i] = i % 100 < 50 ? static_cast<char>(vr.Next()) : 'x';
    }
  }

  int Run() {
    lethe::Options o;
    o.write_buffer_size = static_cast<size_t>(f_.write_buffer_size);
    o.page_cache_bytes = static_cast<size_t>(f_.page_cache_bytes);
    if (f_.memory_budget > 0) {
      lethe::Status s = lethe::MemoryBudget::New(static_cast<size_t>(f_.memory_budget), 0.5, &o.memory_budget);
      if (!s.ok()) Usage("bad --memory_budget");
    }
    o.use_wal = f_.use_wal;
    o.compact_in_memory = f_.compact_in_memory;
    o.multi_get_threads = f_.multi_get_threads;
    o.cf_defaults.page_size = static_cast<size_t>(f_.page_size);
    o.cf_defaults.pages_per_tile = f_.pages_per_tile;
    o.cf_defaults.bloom_bits_per_key = f_.bloom_bits;
    o.cf_defaults.size_ratio = f_.size_ratio;
    o.cf_defaults.dynamic_level_bytes = f_.dynamic_level_bytes;
    o.cf_defaults.compression = CompressionOf(f_.compression);
    if (!f_.bottommost_compression.empty()) {
      o.cf_defaults.bottommost_compression = CompressionOf(f_.bottommost_compression);
    }
    if (!f_.flush_compression.empty()) o.cf_defaults.flush_compression = CompressionOf(f_.flush_compression);
    if (f_.dth_ops > 0) {
      // Time is measured in operations: every operation moves the clock by 1 µs.
      o.clock = &clock_;
      o.cf_defaults.delete_persistence_threshold_us = static_cast<uint64_t>(f_.dth_ops);
      o.cf_defaults.fade_file_pick = f_.fade_pick == "SO"   ? lethe::FadeFilePick::kMinOverlap
                                     : f_.fade_pick == "DD" ? lethe::FadeFilePick::kOldestDelete
                                                            : lethe::FadeFilePick::kMostDeletes;
    }
    if (!f_.use_existing_db) lethe::DestroyDB(f_.db, o);
    PrintHeader();
    lethe::Status s = lethe::DB::Open(o, f_.db, &db_);
    if (!s.ok()) return Fail("open", s);
    cf_ = db_->DefaultColumnFamily();
    wo_.sync = f_.sync;
    wo_.disable_wal = !f_.use_wal;

    size_t start = 0;
    while (start <= f_.benchmarks.size()) {
      size_t comma = f_.benchmarks.find(',', start);
      std::string name = f_.benchmarks.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? f_.benchmarks.size() + 1 : comma + 1;
      if (name.empty()) continue;
      int rc = RunOne(name);
      if (rc != 0) return rc;
    }
    PrintLevels();
    if (f_.stats) {
      std::string st;
      db_->GetProperty(cf_, "lethe.stats", &st);
      std::printf("%s", st.c_str());
    }
    db_.reset();
    if (!f_.use_existing_db) lethe::DestroyDB(f_.db, o);
    return 0;
  }

 private:
  using Op = lethe::Status (Benchmark::*)(Worker& w, int64_t i, bool* found);

  int RunOne(const std::string& name) {
    struct Spec {
      Op op;
      bool write;
      bool use_reads;
    };
    static const std::map<std::string, Spec> specs = {
        {"fillseq", {&Benchmark::FillSeq, true, false}},
        {"fillrandom", {&Benchmark::FillRandom, true, false}},
        {"overwrite", {&Benchmark::FillRandom, true, false}},
        {"appendrandom", {&Benchmark::AppendRandom, true, false}},
        {"readrandom", {&Benchmark::ReadRandom, false, true}},
        {"readmissing", {&Benchmark::ReadMissing, false, true}},
        {"deleterandom", {&Benchmark::DeleteRandom, true, true}},
        {"seekrandom", {&Benchmark::SeekRandom, false, true}},
        {"scanrandom", {&Benchmark::ScanRandom, false, true}},
        {"multireadrandom", {&Benchmark::MultiReadRandom, false, true}},
        {"readseq", {&Benchmark::ReadSeq, false, false}},
        {"ycsbdelete", {&Benchmark::YcsbDelete, true, true}},
    };
    if (name == "checkpoint") return Checkpoint();
    if (name == "flush" || name == "compact" || name == "deleteranges") {
      double t0 = NowSeconds();
      lethe::Status s = name == "flush"     ? db_->Flush()
                        : name == "compact" ? db_->CompactAll()
                                            : DeleteSmallRanges();
      if (s.ok()) s = db_->WaitForBackgroundWork();
      if (!s.ok()) return Fail(name, s);
      std::printf("%-12s : %9.3f seconds\n", name.c_str(), NowSeconds() - t0);
      return 0;
    }
    auto it = specs.find(name);
    if (it == specs.end()) Usage(("unknown benchmark " + name).c_str());
    const Spec& spec = it->second;
    int64_t ops = name == "readseq" ? 1 : (spec.use_reads ? f_.reads : f_.num);
    // A multireadrandom operation is a batch; it is counted per key below.
    const int64_t per_op = name == "multireadrandom" ? f_.batch_size : 1;
    ops = std::max<int64_t>(ops / per_op, 1);
    // Writers and readseq run on one thread; readers on --threads.
    int threads = spec.write || name == "readseq" ? 1 : f_.threads;
    std::vector<Worker> workers;
    for (int t = 0; t < threads; t++) workers.emplace_back(t == 0 ? f_.seed : f_.seed * 31 + static_cast<uint64_t>(t));
    double t0 = NowSeconds();
    if (threads == 1) {
      RunOps(spec.op, name, ops, &workers[0], true);
    } else {
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; t++) {
        pool.emplace_back([&, t] { RunOps(spec.op, name, ops / threads, &workers[static_cast<size_t>(t)], t == 0); });
      }
      for (auto& th : pool) th.join();
      ops = ops / threads * threads;
    }
    double elapsed = NowSeconds() - t0;
    int64_t found = 0;
    double bytes = 0;
    std::vector<float> latencies_us;
    for (Worker& w : workers) {
      if (!w.status.ok()) return Fail(name, w.status);
      found += w.found;
      bytes += w.bytes;
      latencies_us.insert(latencies_us.end(), w.latencies_us.begin(), w.latencies_us.end());
    }
    double settle = 0;
    if (spec.write) {
      double s0 = NowSeconds();
      lethe::Status s = db_->WaitForBackgroundWork();
      if (!s.ok()) return Fail(name, s);
      settle = NowSeconds() - s0;
    }
    if (name == "readseq") ops = found;
    ops *= per_op;
    std::fprintf(stderr, "%40s\r", "");
    std::printf("%-12s : %9.3f micros/op %10.0f ops/sec; %7.1f MB/s", name.c_str(),
                elapsed * 1e6 / std::max<int64_t>(ops, 1), ops / elapsed, bytes / elapsed / 1048576.0);
    if (threads > 1) std::printf(" (%d threads)", threads);
    if (spec.write) std::printf(" (settle %.2f s)", settle);
    if (name == "readrandom" || name == "readmissing" || name == "deleterandom" || name == "seekrandom" || name == "scanrandom" ||
        name == "multireadrandom") {
      std::printf(" (found %" PRId64 " of %" PRId64 ")", found, ops);
    }
    std::printf("\n");
    if (f_.histogram && !latencies_us.empty()) {
      std::sort(latencies_us.begin(), latencies_us.end());
      auto pct = [&](double p) { return latencies_us[static_cast<size_t>(p * (latencies_us.size() - 1))]; };
      std::printf("%-12s   latency us: p50 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", "", pct(0.5), pct(0.99),
                  pct(0.999), latencies_us.back());
    }
    if (spec.write) PrintAmplification();
    if (name == "ycsbdelete") PrintTombstones();
    PrintMemory();
    return 0;
  }

  // Resident memory against what the engine counts (its budget, or its own sizes).
  void PrintMemory() {
    lethe::DbStatistics st = db_->GetStatistics();
    long rss_kib = 0;
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof(line), f)) {
        if (std::sscanf(line, "VmRSS: %ld kB", &rss_kib) == 1) break;
      }
      std::fclose(f);
    }
    const double mib = 1048576.0;
    std::printf("%-12s   memory: RSS %.0f MiB; counted %.0f MiB of %.0f: pages %.0f, write buffers %.0f, tables %.0f"
                " (pinned %.0f)\n",
                "", rss_kib / 1024.0,
                (st.memory_page_cache_bytes + st.memory_write_buffer_bytes + st.memory_table_reader_bytes) / mib,
                st.memory_budget_bytes / mib, st.memory_page_cache_bytes / mib, st.memory_write_buffer_bytes / mib,
                st.memory_table_reader_bytes / mib, st.memory_pinned_table_reader_bytes / mib);
  }

  // Runs `ops` operations on one thread; the first thread shows progress.
  void RunOps(Op op, const std::string& name, int64_t ops, Worker* w, bool progress) {
    if (f_.histogram) w->latencies_us.reserve(static_cast<size_t>(std::min<int64_t>(ops, 10'000'000)));
    double last_progress = NowSeconds();
    for (int64_t i = 0; i < ops; i++) {
      double a = f_.histogram ? NowSeconds() : 0;
      bool hit = false;
      clock_.Advance(1);
      w->status = (this->*op)(*w, i, &hit);
      if (!w->status.ok()) return;
      if (hit) w->found++;
      if (f_.histogram && w->latencies_us.size() < w->latencies_us.capacity()) {
        w->latencies_us.push_back(static_cast<float>((NowSeconds() - a) * 1e6));
      }
      if (progress && (i & 0xfff) == 0 && NowSeconds() - last_progress > 1.0) {
        last_progress = NowSeconds();
        std::fprintf(stderr, "... %-12s %3d%%\r", name.c_str(), static_cast<int>(100 * i / ops));
      }
    }
  }

  // A copy of the database beside it (its memtables written as checkpoint
  // images), timed and removed again.
  int Checkpoint() {
    std::string dir = f_.db + ".checkpoint";
    lethe::Options o;
    lethe::DestroyDB(dir, o);
    double t0 = NowSeconds();
    lethe::Status s = db_->Checkpoint(dir);
    if (!s.ok()) return Fail("checkpoint", s);
    double elapsed = NowSeconds() - t0;
    uint64_t bytes = 0;
    std::vector<std::string> children;
    lethe::Env* env = lethe::Env::Default();
    env->GetChildren(dir, &children);
    for (const std::string& c : children) {
      uint64_t size = 0;
      // Files named as the database's own are linked (its tables) or small (its manifest).
      if (!env->FileExists(f_.db + "/" + c) && env->GetFileSize(dir + "/" + c, &size).ok()) bytes += size;
    }
    std::printf("%-12s : %9.3f seconds, %.1f MB of memtable images written\n", "checkpoint",
                elapsed, bytes / 1048576.0);
    lethe::DestroyDB(dir, o);
    return 0;
  }

  // Range deletes of 10 keys in every 100 ([100 r + 37, 100 r + 47)), 10 % of --num.
  lethe::Status DeleteSmallRanges() {
    for (int64_t r = 0; r < f_.num / 100; r++) {
      lethe::Status s = db_->DeleteRange(wo_, cf_, Key(100 * r + 37), Key(100 * r + 47));
      if (!s.ok()) return s;
    }
    return lethe::Status::OK();
  }

  // Delete-heavy YCSB-A: half lookups, half writes of which
  // --delete_percent of all operations are point deletes; uniform keys.
  lethe::Status YcsbDelete(Worker& w, int64_t, bool* found) {
    uint64_t r = w.rng.Uniform(100);
    if (r < 50) return ReadRandom(w, 0, found);
    if (r < 50 + static_cast<uint64_t>(f_.delete_percent)) return DeleteRandom(w, 0, found);
    return Write(w, static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num))));
  }

  void PrintTombstones() {
    lethe::DbStatistics st = db_->GetStatistics();
    uint64_t tombstones = 0, oldest = 0;
    for (const auto& cf : st.column_families) {
      oldest = std::max(oldest, cf.oldest_tombstone_age_us);
      for (const auto& l : cf.levels) tombstones += l.point_tombstones + l.range_tombstones;
    }
    std::printf("%-12s   tombstones in files %" PRIu64 ", oldest tombstone %" PRIu64 " ops old", "", tombstones,
                oldest);
    if (f_.dth_ops > 0) std::printf(" (D_th %" PRId64 " ops)", f_.dth_ops);
    std::printf(", delete-driven compactions %" PRIu64 "\n",
                st.compactions_delete_driven);
  }

  std::string Key(int64_t n, char prefix = 'k') const {
    std::string k(static_cast<size_t>(f_.key_size), '0');
    k[0] = prefix;
    for (int p = f_.key_size - 1; p >= 1 && n > 0; p--) {
      k[static_cast<size_t>(p)] = static_cast<char>('0' + n % 10);
      n /= 10;
    }
    return k;
  }

  lethe::Status Write(Worker& w, int64_t n) {
    std::string k = Key(n);
    const size_t size = static_cast<size_t>(f_.value_size);
    std::string_view value(value_pool_.data() + w.rng.Uniform(value_pool_.size() - size), size);
    w.bytes += k.size() + value.size();
    live_[static_cast<size_t>(n)] = true;
    return db_->Put(wo_, cf_, k, value);
  }
  lethe::Status FillSeq(Worker& w, int64_t i, bool*) { return Write(w, i); }
  lethe::Status FillRandom(Worker& w, int64_t, bool*) { return Write(w, static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num)))); }
  // A merge (list append) to one of --groups keys, as a window operator adds elements to its windows.
  lethe::Status AppendRandom(Worker& w, int64_t, bool*) {
    std::string k = Key(static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.groups))));
    const size_t size = static_cast<size_t>(f_.value_size);
    std::string_view value(value_pool_.data() + w.rng.Uniform(value_pool_.size() - size), size);
    w.bytes += k.size() + value.size();
    return db_->Merge(wo_, cf_, k, value);
  }
  lethe::Status ReadRandom(Worker& w, int64_t, bool* found) {
    thread_local std::string v;  // reused, as MultiReadRandom's buffers are
    lethe::Status s = db_->Get(lethe::ReadOptions(), cf_, Key(static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num)))), &v);
    if (s.IsNotFound()) return lethe::Status::OK();
    *found = s.ok();
    w.bytes += v.size();
    return s;
  }
  // One MultiGet of --batch_size random keys; adds its hits to w.found.
  lethe::Status MultiReadRandom(Worker& w, int64_t, bool*) {
    const size_t n = static_cast<size_t>(f_.batch_size);
    // Reused from batch to batch, as a caller with a steady stream of batches would.
    thread_local std::vector<std::string> keys, values;
    thread_local std::vector<std::string_view> views;
    thread_local std::vector<lethe::Status> statuses;
    keys.resize(n);
    values.resize(n);
    views.resize(n);
    statuses.resize(n);
    for (size_t i = 0; i < n; i++) {
      keys[i] = Key(static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num))));
      views[i] = keys[i];
    }
    db_->MultiGet(lethe::ReadOptions(), cf_, n, views.data(), values.data(), statuses.data());
    for (size_t i = 0; i < n; i++) {
      if (statuses[i].IsNotFound()) continue;
      if (!statuses[i].ok()) return statuses[i];
      w.found++;
      w.bytes += values[i].size();
    }
    return lethe::Status::OK();
  }
  lethe::Status ReadMissing(Worker& w, int64_t, bool* found) {
    std::string v;
    // Inside the key range, so lookups reach files and Bloom filters: an
    // existing key's digits with the last one replaced by a non-digit.
    std::string k = Key(static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num))));
    k.back() = '.';
    lethe::Status s = db_->Get(lethe::ReadOptions(), cf_, k, &v);
    if (s.IsNotFound()) return lethe::Status::OK();
    *found = s.ok();
    return s;
  }
  lethe::Status DeleteRandom(Worker& w, int64_t, bool* found) {
    int64_t n = static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num)));
    *found = live_[static_cast<size_t>(n)];
    live_[static_cast<size_t>(n)] = false;
    return db_->Delete(wo_, cf_, Key(n));
  }
  lethe::Status SeekRandom(Worker& w, int64_t, bool* found) {
    auto it = db_->NewIterator(lethe::ReadOptions(), cf_);
    it->Seek(Key(static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num)))));
    *found = it->Valid();
    for (int j = 0; j < f_.seek_nexts && it->Valid(); j++) {
      w.bytes += it->key().size() + it->value().size();
      it->Next();
    }
    return it->status();
  }
  // Every entry of a random key range of --seek_nexts keys (fewer after deletes).
  lethe::Status ScanRandom(Worker& w, int64_t, bool* found) {
    const auto from = static_cast<int64_t>(w.rng.Uniform(static_cast<uint64_t>(f_.num)));
    lethe::ReadOptions ro;
    ro.has_upper_bound = true;
    ro.upper_bound = Key(from + f_.seek_nexts);
    auto it = db_->NewIterator(ro, cf_);
    it->Seek(Key(from));
    *found = it->Valid();
    for (; it->Valid(); it->Next()) w.bytes += it->key().size() + it->value().size();
    return it->status();
  }
  lethe::Status ReadSeq(Worker& w, int64_t, bool* found) {
    auto it = db_->NewIterator(lethe::ReadOptions(), cf_);
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      w.bytes += it->key().size() + it->value().size();
      n++;
    }
    readseq_count_ = n;
    *found = true;
    return it->status();
  }

  void PrintHeader() const {
    std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    std::printf("Lethe bench     %s, %u CPUs\n", date, std::thread::hardware_concurrency());
    std::printf("Keys:       %d bytes each\nValues:     %d bytes each\nEntries:    %" PRId64 " (reads %" PRId64 ")\n",
                f_.key_size, f_.value_size, f_.num, f_.reads);
    if (f_.memory_budget > 0) std::printf("Memory:     a budget of %" PRId64 " B (write buffers half of it)\n", f_.memory_budget);
    std::printf("Options:    write_buffer %" PRId64 " B, page_cache %" PRId64 " B, page %" PRId64
                " B, pages_per_tile %d, bloom %d bits/key, size_ratio %d%s, compression %s, wal %s%s%s\n",
                f_.write_buffer_size, f_.page_cache_bytes, f_.page_size, f_.pages_per_tile, f_.bloom_bits,
                f_.size_ratio, f_.dynamic_level_bytes ? " (dynamic level targets)" : "", f_.compression.c_str(), f_.use_wal ? "on" : "off", f_.sync ? " (sync)" : "",
                !f_.use_wal && !f_.compact_in_memory ? ", compaction in memory off" : "");
    std::printf("Database:   %s\n------------------------------------------------\n", f_.db.c_str());
  }

  void PrintAmplification() {
    lethe::DbStatistics st = db_->GetStatistics();
    uint64_t live = static_cast<uint64_t>(std::count(live_.begin(), live_.end(), true));
    double logical = static_cast<double>(live) * (f_.key_size + f_.value_size);
    double wa = st.user_bytes_written == 0 ? 0 : double(st.bytes_written_flush + st.bytes_written_compaction) / st.user_bytes_written;
    std::printf("%-12s   written: wal %.1f MB, flush %.1f MB, compaction %.1f MB; write amp %.2f; "
                "live %.1f MB for %" PRIu64 " keys, space amp %.2f\n",
                "", st.bytes_written_wal / 1048576.0, st.bytes_written_flush / 1048576.0,
                st.bytes_written_compaction / 1048576.0, wa, st.live_bytes / 1048576.0, live,
                logical == 0 ? 0 : st.live_bytes / logical);
  }

  void PrintLevels() {
    lethe::DbStatistics st = db_->GetStatistics();
    std::printf("------------------------------------------------\nlevel  files      bytes     entries  tombstones\n");
    for (const auto& cf : st.column_families) {
      if (cf.id != cf_->id()) continue;
      for (const auto& l : cf.levels) {
        std::printf("%5d %6" PRIu64 " %10" PRIu64 " %11" PRIu64 " %11" PRIu64 "\n", l.level, l.files, l.bytes, l.entries,
                    l.point_tombstones);
      }
    }
    uint64_t lookups = st.page_cache_hits + st.page_cache_misses;
    std::printf("page cache hit rate %.1f%% (%" PRIu64 " lookups), page reads avoided by Bloom filters %" PRIu64
                ", write stalls %" PRIu64 "\n",
                lookups == 0 ? 0.0 : 100.0 * st.page_cache_hits / lookups, lookups, st.bloom_useful, st.write_stalls);
  }

  int Fail(const std::string& what, const lethe::Status& s) {
    std::fprintf(stderr, "lethe_bench: %s failed: %s\n", what.c_str(), s.ToString().c_str());
    return 1;
  }

  Flags f_;
  std::vector<bool> live_;  // which keys hold a value, for space amplification
  lethe::ManualClock clock_{1};  // the logical clock with --dth_ops (1 µs per operation)
  std::string value_pool_;
  std::unique_ptr<lethe::DB> db_;
  lethe::ColumnFamilyHandle* cf_ = nullptr;
  lethe::WriteOptions wo_;
  int64_t readseq_count_ = 0;
};

}  // namespace

int main(int argc, char** argv) { return Benchmark(ParseFlags(argc, argv)).Run(); }
