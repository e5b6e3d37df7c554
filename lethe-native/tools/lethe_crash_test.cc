// lethe_crash_test: crash torture. A child process runs a random workload
// (batches of puts, point deletes, sort-key range deletes and merges over two
// column families, deletes by delete key, horizons, flushes, full compactions
// and checkpoints, with FADE and the KiWi page drops running in the
// background) and is killed with SIGKILL: at a random moment, or at a named
// kill point inside a flush, a compaction, a manifest write, a page drop, a
// WAL switch or a checkpoint (util/kill_point.h). Half the kills also
// simulate a power loss: every byte not synced and every file name not made
// durable by a directory sync is taken away (FaultInjectionEnv's journal).
// The parent then reopens the database and checks it against the model
// (test/model.h) of what the child had been acknowledged:
//
//  * every write acknowledged as durable is there: with the WAL, every write
//    against a process kill, and synced writes against a power loss; without
//    the WAL, every write before the last completed flush (a checkpoint
//    copies the memtables into its copy and leaves the database unflushed);
//  * the state is exactly the model's after a prefix of the writes (each
//    batch carries a marker with its index, which names the prefix) and
//    every acknowledged delete by delete key and horizon (the one in flight
//    may or may not have happened);
//  * the newest acknowledged checkpoint opens and holds the state it was
//    taken at.
//
// The next child continues on the recovered database. Any difference ends
// the run with the seed, the kill and both states' difference.
//
//   lethe_crash_test [--kills N] [--seed S] [--dir D] [--keep]
//
// Exit status: 0 when every kill was survived, 1 on a violation, 2 on misuse.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "env/fault_injection_env.h"
#include "lethe/db.h"
#include "lethe/env.h"
#include "model.h"
#include "util/kill_point.h"
#include "util/random.h"

namespace lethe {
namespace {

namespace fs = std::filesystem;
using model::Model;

// ---- The workload: op i is a pure function of (seed, i).

constexpr const char* kFamilies[] = {"default", "cf1"};
constexpr const char* kMarkerKey = "\x01marker";  // below every workload key
constexpr int kKeySpace = 4000;

enum class OpKind { kBatch, kDeleteByDeleteKey, kAdvanceHorizon, kFlush, kCompactAll, kCheckpoint };

struct SubOp {
  enum Kind { kPut, kDelete, kDeleteRange, kMerge } kind;
  int family;
  std::string key, arg;  // arg: value, operand or range end
  uint64_t delete_key;
};

struct Op {
  uint64_t index;
  OpKind kind;
  std::vector<SubOp> subs;  // kBatch
  bool sync = false;        // kBatch: WriteOptions::sync
  int family = 0;
  uint64_t lo = 0, hi = 0;  // delete-key range, or horizon in lo
};

std::string KeyOf(uint64_t n) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%05" PRIu64, n);
  return buf;
}

// Delete keys are op indexes (monotone per key, as the engine requires),
// or "never" for a fixed fifth of the keys.
uint64_t DeleteKeyFor(const std::string& key, uint64_t index) {
  return std::hash<std::string>()(key) % 5 == 0 ? kMaxDeleteKey : index;
}

Op MakeOp(uint64_t seed, uint64_t index) {
  Random rnd(seed * 0x9E3779B97F4A7C15ull + index * 0xBF58476D1CE4E5B9ull + 1);
  Op op;
  op.index = index;
  uint64_t r = rnd.Uniform(1000);
  op.family = static_cast<int>(rnd.Uniform(2));
  if (r < 15) {
    op.kind = OpKind::kDeleteByDeleteKey;
    // An older stretch of time, so that whole pages go.
    uint64_t back = 500 + rnd.Uniform(6000), width = 50 + rnd.Uniform(1500);
    op.lo = index > back ? index - back : 0;
    op.hi = op.lo + width;
  } else if (r < 25) {
    op.kind = OpKind::kAdvanceHorizon;
    op.lo = index > 8000 ? index - 8000 + rnd.Uniform(2000) : 0;
  } else if (r < 33) {
    op.kind = OpKind::kFlush;
  } else if (r < 35) {
    op.kind = OpKind::kCompactAll;
  } else if (r < 38) {
    op.kind = OpKind::kCheckpoint;
  } else {
    op.kind = OpKind::kBatch;
    op.sync = rnd.OneIn(10);
    int n = 1 + static_cast<int>(rnd.Uniform(4));
    for (int j = 0; j < n; j++) {
      SubOp s;
      s.family = static_cast<int>(rnd.Uniform(2));
      s.key = KeyOf(rnd.Uniform(kKeySpace));
      s.delete_key = DeleteKeyFor(s.key, index);
      uint64_t k = rnd.Uniform(100);
      if (k < 62) {
        s.kind = SubOp::kPut;
        s.arg = std::string(8 + rnd.Uniform(120), static_cast<char>('a' + index % 26));
        s.arg.replace(0, std::min<size_t>(s.arg.size(), 8), std::to_string(index).substr(0, 8));
      } else if (k < 80) {
        s.kind = SubOp::kDelete;
      } else if (k < 84) {
        s.kind = SubOp::kDeleteRange;
        uint64_t b = rnd.Uniform(kKeySpace);
        s.key = KeyOf(b);
        s.arg = KeyOf(b + 1 + rnd.Uniform(40));
      } else {
        s.kind = SubOp::kMerge;
        s.arg = "m" + std::to_string(index);
      }
      op.subs.push_back(std::move(s));
    }
  }
  return op;
}

void ApplyToModel(const Op& op, Model* m) {
  switch (op.kind) {
    case OpKind::kBatch:
      for (const SubOp& s : op.subs) {
        const std::string cf = kFamilies[s.family];
        switch (s.kind) {
          case SubOp::kPut: m->Put(cf, s.key, s.arg, s.delete_key); break;
          case SubOp::kDelete: m->Delete(cf, s.key); break;
          case SubOp::kDeleteRange: m->DeleteRange(cf, s.key, s.arg); break;
          case SubOp::kMerge: m->Merge(cf, s.key, s.arg, s.delete_key); break;
        }
      }
      m->Put("default", kMarkerKey, std::to_string(op.index), kMaxDeleteKey);
      break;
    case OpKind::kDeleteByDeleteKey: m->DeleteByDeleteKey(kFamilies[op.family], op.lo, op.hi); break;
    case OpKind::kAdvanceHorizon: m->AdvanceHorizon(kFamilies[op.family], op.lo); break;
    default: break;  // flushes, compactions and checkpoints change no content
  }
}

// ---- What the child tells the parent, in memory shared across the fork.

struct Shared {
  std::atomic<uint64_t> acked;              // ops [start, acked) completed
  std::atomic<int64_t> durable_write;       // newest write acknowledged durable (-1: none)
  std::atomic<int64_t> checkpoint_op;       // newest completed checkpoint (-1: none)
  std::atomic<int64_t> kill_after_hits;     // kill-point mode: hits left before the kill
  char kill_point[64];                      // the point to kill at ("" = none)
  char killed_at[64];                       // where the kill came from
  char error[512];                          // a child's failure
};
Shared* shared = nullptr;

void OnKillPoint(const char* name) {
  if (std::strcmp(name, shared->kill_point) != 0) return;
  if (shared->kill_after_hits.fetch_sub(1) != 1) return;
  std::snprintf(shared->killed_at, sizeof(shared->killed_at), "%s", name);
  ::raise(SIGKILL);
}

const char* const kKillPoints[] = {
    "wal.appended",         "wal.created",         "table.finished",        "flush.tables_written",
    "flush.before_manifest", "flush.installed",    "compaction.outputs_written", "compaction.installed",
    "obsolete_files.removing", "manifest.appended", "manifest.synced",      "manifest.new_written",
    "current.tmp_written",  "current.renamed",     "page_drop.patches_written", "page_drop.applied",
    "page_drop.punching",   "checkpoint.linked",   "flush.woken",
};

struct Session {
  bool use_wal = true;
  bool power_loss = false;
  int pages_per_tile = 4;
  uint64_t dth_us = 0;
};

Options MakeOptions(const Session& s, Env* env) {
  Options o;
  o.env = env;
  o.use_wal = s.use_wal;
  o.write_buffer_size = 48 << 10;
  o.page_cache_bytes = 1 << 20;
  o.cf_defaults.page_size = 256;
  o.cf_defaults.pages_per_tile = s.pages_per_tile;
  o.cf_defaults.level1_bytes = 192 << 10;
  o.cf_defaults.target_file_size = 48 << 10;
  o.cf_defaults.size_ratio = 4;
  o.cf_defaults.level0_compaction_trigger = 3;
  o.cf_defaults.delete_persistence_threshold_us = s.dth_us;
  return o;
}

std::string CheckpointDir(const std::string& dir, uint64_t index) {
  return dir + "-ckpt-" + std::to_string(index);
}

[[noreturn]] void ChildFail(const std::string& what, const Status& s) {
  std::snprintf(shared->error, sizeof(shared->error), "%s: %s", what.c_str(), s.ToString().c_str());
  std::_Exit(3);
}

// The child: runs ops from `start` until it is killed.
[[noreturn]] void RunChild(const std::string& dir, uint64_t seed, uint64_t start, const Session& session,
                           const std::string& journal) {
  FaultInjectionEnv env(Env::Default());
  int fd = -1;
  if (session.power_loss) {
    fd = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
    if (fd < 0) ChildFail("journal", Status::IOError(journal, std::strerror(errno)));
    env.SetSyncJournal(fd);
  }
  // Before the open: a kill during recovery (its manifest roll and flush) counts too.
  SetKillPointHandler(&OnKillPoint);
  std::unique_ptr<DB> db;
  Status s = DB::Open(MakeOptions(session, &env), dir, &db);
  if (!s.ok()) ChildFail("open", s);
  ColumnFamilyHandle* cfs[2] = {db->DefaultColumnFamily(), db->GetColumnFamily("cf1")};
  if (cfs[1] == nullptr) ChildFail("open", Status::Corruption("column family cf1 is missing"));
  int64_t last_write = -1;
  for (uint64_t i = start;; i++) {
    Op op = MakeOp(seed, i);
    switch (op.kind) {
      case OpKind::kBatch: {
        WriteBatch b;
        for (const SubOp& sub : op.subs) {
          ColumnFamilyHandle* cf = cfs[sub.family];
          switch (sub.kind) {
            case SubOp::kPut: b.Put(cf, sub.key, sub.arg, sub.delete_key); break;
            case SubOp::kDelete: b.Delete(cf, sub.key, sub.delete_key); break;
            case SubOp::kDeleteRange: b.DeleteRange(cf, sub.key, sub.arg); break;
            case SubOp::kMerge: b.Merge(cf, sub.key, sub.arg, sub.delete_key); break;
          }
        }
        b.Put(cfs[0], kMarkerKey, std::to_string(i), kMaxDeleteKey);
        WriteOptions wo;
        wo.sync = op.sync && session.use_wal;
        s = db->Write(wo, b);
        last_write = static_cast<int64_t>(i);
        // A process kill loses nothing the WAL holds; a power loss, what
        // no sync covered.
        if (s.ok() && session.use_wal && (!session.power_loss || wo.sync)) shared->durable_write = last_write;
        break;
      }
      case OpKind::kDeleteByDeleteKey: s = db->DeleteByDeleteKey(cfs[op.family], op.lo, op.hi); break;
      case OpKind::kAdvanceHorizon: s = db->AdvanceHorizon(cfs[op.family], op.lo); break;
      case OpKind::kFlush:
        s = db->Flush();
        if (s.ok()) shared->durable_write = last_write;
        break;
      case OpKind::kCompactAll:
        s = db->CompactAll();
        if (s.ok()) shared->durable_write = last_write;
        break;
      case OpKind::kCheckpoint:
        // Makes its copy durable, not the database: a checkpoint copies the
        // memtables instead of flushing them.
        s = db->Checkpoint(CheckpointDir(dir, i));
        if (s.ok()) shared->checkpoint_op = static_cast<int64_t>(i);
        break;
    }
    if (!s.ok()) ChildFail("op " + std::to_string(i), s);
    shared->acked = i + 1;
  }
}

// ---- The parent's checks.

using State = std::map<std::string, std::map<std::string, std::pair<std::string, uint64_t>>>;

Status ReadState(DB* db, State* state) {
  state->clear();
  for (const char* name : kFamilies) {
    ColumnFamilyHandle* cf = db->GetColumnFamily(name);
    if (cf == nullptr) return Status::Corruption("column family missing", name);
    auto& f = (*state)[name];
    auto it = db->NewIterator(ReadOptions(), cf);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      f[std::string(it->key())] = {std::string(it->value()), it->delete_key()};
    }
    if (!it->status().ok()) return it->status();
  }
  return Status::OK();
}

State StateOf(const Model& m) {
  State s;
  for (const char* name : kFamilies) {
    auto& f = s[name];
    auto it = m.families.find(name);
    if (it == m.families.end()) continue;
    for (const auto& [k, e] : it->second) f[k] = {e.first, e.second};
  }
  return s;
}

std::string Diff(const State& got, const State& want) {
  std::string out;
  int shown = 0;
  for (const char* name : kFamilies) {
    const auto& g = got.at(name);
    auto wi = want.find(name);
    static const std::map<std::string, std::pair<std::string, uint64_t>> kEmpty;
    const auto& w = wi == want.end() ? kEmpty : wi->second;
    for (const auto& [k, v] : w) {
      auto it = g.find(k);
      if (it == g.end()) {
        if (shown++ < 10) out += std::string("  ") + name + " lost " + k + "=" + v.first.substr(0, 20) + "\n";
      } else if (it->second != v) {
        if (shown++ < 10) {
          out += std::string("  ") + name + " " + k + ": got " + it->second.first.substr(0, 40) + " dk " +
                 std::to_string(it->second.second) + ", want " + v.first.substr(0, 40) + " dk " +
                 std::to_string(v.second) + "\n";
        }
      }
    }
    for (const auto& [k, v] : g) {
      if (!w.count(k) && shown++ < 10) out += std::string("  ") + name + " resurrected " + k + "\n";
    }
  }
  return out + "  (" + std::to_string(shown) + " differences)\n";
}

struct Tally {
  int kills = 0, power_losses = 0, files_changed_by_power_loss = 0, checkpoints_verified = 0;
  uint64_t ops = 0, in_flight_applied = 0;
  std::map<std::string, int> killed_at;
};

int Run(int kills, uint64_t seed, const std::string& dir, bool keep) {
  std::error_code ec;
  fs::create_directories(fs::path(dir).parent_path(), ec);
  fs::remove_all(dir, ec);
  for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path(), ec)) {
    if (e.path().string().rfind(dir + "-ckpt-", 0) == 0) fs::remove_all(e.path(), ec);
  }
  const std::string journal = dir + ".journal";
  shared = static_cast<Shared*>(::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                                       MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  {  // The database and its second family.
    std::unique_ptr<DB> db;
    Status s = DB::Open(MakeOptions(Session(), Env::Default()), dir, &db);
    ColumnFamilyHandle* h = nullptr;
    if (s.ok()) s = db->CreateColumnFamily("cf1", ColumnFamilyOptions(MakeOptions(Session(), nullptr).cf_defaults), &h);
    if (!s.ok()) {
      std::fprintf(stderr, "create: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  Model model;
  model.families["default"];
  model.families["cf1"];
  uint64_t next = 0;  // the next op to run
  Random rnd(seed);
  Tally tally;
  const auto started = std::chrono::steady_clock::now();
  auto last_report = started;
  std::printf("crash torture: %d kills, seed %" PRIu64 ", database %s\n", kills, seed, dir.c_str());
  std::fflush(stdout);

  for (int kill = 1; kill <= kills; kill++) {
    Session session;
    session.use_wal = !rnd.OneIn(4);
    session.power_loss = rnd.OneIn(2);
    session.pages_per_tile = rnd.OneIn(3) ? 1 : 4 + 4 * static_cast<int>(rnd.Uniform(2));
    session.dth_us = rnd.OneIn(2) ? 300'000 + rnd.Uniform(400'000) : 0;
    const bool at_point = rnd.OneIn(2);
    std::memset(static_cast<void*>(shared), 0, sizeof(Shared));
    shared->acked = next;
    shared->durable_write = -1;
    shared->checkpoint_op = -1;
    if (at_point) {
      std::snprintf(shared->kill_point, sizeof(shared->kill_point), "%s",
                    kKillPoints[rnd.Uniform(sizeof(kKillPoints) / sizeof(kKillPoints[0]))]);
      shared->kill_after_hits = 1 + static_cast<int64_t>(rnd.Uniform(3));
    }
    const auto timer = std::chrono::milliseconds(at_point ? 1500 : 30 + rnd.Uniform(500));
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) RunChild(dir, seed, next, session, journal);

    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + timer;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        if (shared->killed_at[0] == '\0') std::snprintf(shared->killed_at, sizeof(shared->killed_at), "timer");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
      std::fprintf(stderr, "FAIL kill %d (seed %" PRIu64 "): the child ended on its own (status %d): %s\n", kill,
                   seed, status, shared->error);
      return 1;
    }
    tally.kills++;
    tally.killed_at[shared->killed_at]++;
    if (session.power_loss) {
      int changed = 0;
      Status s = FaultInjectionEnv::ApplyPowerLoss(journal, &changed);
      if (!s.ok()) {
        std::fprintf(stderr, "power loss simulation: %s\n", s.ToString().c_str());
        return 1;
      }
      tally.power_losses++;
      tally.files_changed_by_power_loss += changed;
    }

    const uint64_t start = next, acked = shared->acked.load();
    const int64_t durable = shared->durable_write.load(), ckpt = shared->checkpoint_op.load();
    auto fail = [&](const std::string& what) {
      std::fprintf(stderr,
                   "FAIL kill %d of seed %" PRIu64 " (killed at %s; session: wal %d, power loss %d, h %d, D_th %" PRIu64
                   " us; ops %" PRIu64 "..%" PRIu64 " acknowledged, newest durable write %" PRId64 "):\n%s\n",
                   kill, seed, shared->killed_at, session.use_wal, session.power_loss, session.pages_per_tile,
                   session.dth_us, start, acked, durable, what.c_str());
      std::fprintf(stderr, "replay: lethe_crash_test --seed %" PRIu64 " --kills %d --keep\n", seed, kill);
      return 1;
    };

    std::unique_ptr<DB> db;
    Status s = DB::Open(MakeOptions(Session(), Env::Default()), dir, &db);
    if (!s.ok()) return fail("reopen: " + s.ToString());
    State got;
    s = ReadState(db.get(), &got);
    if (!s.ok()) return fail("read: " + s.ToString());
    // The newest write that made it, by its marker.
    int64_t marker = -1;
    auto mk = got["default"].find(kMarkerKey);
    if (mk != got["default"].end()) marker = std::stoll(mk->second.first);
    if (marker < durable) {
      return fail("lost acknowledged durable writes: the newest write recovered is " + std::to_string(marker) +
                  ", write " + std::to_string(durable) + " was acknowledged durable");
    }
    if (marker > static_cast<int64_t>(acked)) {
      return fail("a write that never started was recovered: " + std::to_string(marker));
    }
    // The candidates: writes up to the marker, every acknowledged other op,
    // and the op in flight either way.
    auto candidate = [&](bool with_in_flight) {
      Model m = model;
      const uint64_t end = acked + (with_in_flight ? 1 : 0);
      for (uint64_t i = start; i < end; i++) {
        Op op = MakeOp(seed, i);
        if (op.kind == OpKind::kBatch && static_cast<int64_t>(i) > marker) continue;
        ApplyToModel(op, &m);
      }
      return m;
    };
    std::optional<Model> matched;
    Model without = candidate(false);
    if (StateOf(without) == got) {
      matched = std::move(without);
      next = acked;
    } else {
      Model with = candidate(true);
      if (StateOf(with) == got) {
        matched = std::move(with);
        next = acked + 1;
        tally.in_flight_applied++;
      } else {
        return fail("the recovered state is no state the acknowledged ops allow; against the state without "
                    "the op in flight:\n" + Diff(got, StateOf(without)));
      }
    }
    tally.ops += next - start;
    const Model session_start = std::move(model);
    model = std::move(*matched);
    db.reset();

    if (ckpt >= 0) {
      // The newest checkpoint holds every op before it.
      Model at = session_start;
      for (uint64_t i = start; i < static_cast<uint64_t>(ckpt); i++) ApplyToModel(MakeOp(seed, i), &at);
      std::unique_ptr<DB> cdb;
      s = DB::Open(MakeOptions(Session(), Env::Default()), CheckpointDir(dir, static_cast<uint64_t>(ckpt)), &cdb);
      if (!s.ok()) return fail("checkpoint " + std::to_string(ckpt) + " does not open: " + s.ToString());
      State in_ckpt;
      s = ReadState(cdb.get(), &in_ckpt);
      if (!s.ok()) return fail("checkpoint read: " + s.ToString());
      if (in_ckpt != StateOf(at)) {
        return fail("checkpoint " + std::to_string(ckpt) + " differs from the state it was taken at:\n" +
                    Diff(in_ckpt, StateOf(at)));
      }
      tally.checkpoints_verified++;
    }
    for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path(), ec)) {
      if (e.path().string().rfind(dir + "-ckpt-", 0) == 0) fs::remove_all(e.path(), ec);
    }

    auto now = std::chrono::steady_clock::now();
    if (now - last_report >= std::chrono::seconds(5) || kill == kills) {
      last_report = now;
      std::printf("  %d/%d kills, %" PRIu64 " ops survived, %.0f s\n", kill, kills, tally.ops,
                  std::chrono::duration<double>(now - started).count());
      std::fflush(stdout);
    }
  }
  std::printf("survived %d kills (%d with a simulated power loss, %d files truncated or removed by them), "
              "%d checkpoints verified, %" PRIu64 " ops, in-flight op applied %" PRIu64 " times\nkilled at:\n",
              tally.kills, tally.power_losses, tally.files_changed_by_power_loss, tally.checkpoints_verified,
              tally.ops, tally.in_flight_applied);
  for (const auto& [where, n] : tally.killed_at) std::printf("  %-28s %d\n", where.c_str(), n);
  if (!keep) {
    fs::remove_all(dir, ec);
    fs::remove(journal, ec);
  }
  return 0;
}

}  // namespace
}  // namespace lethe

int main(int argc, char** argv) {
  int kills = 200;
  uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::string dir = (std::filesystem::temp_directory_path() / "lethe_crash_test").string();
  bool keep = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--kills" && i + 1 < argc) kills = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: lethe_crash_test [--kills N] [--seed S] [--dir D] [--keep]\n");
      return 2;
    }
  }
  return lethe::Run(kills, seed, dir, keep);
}
