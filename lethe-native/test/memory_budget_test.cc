// Databases on one memory budget: what they read stays their own, their write
// buffers stay within the budget's share (an idle database flushes when
// another needs the room), the page cache gives way to write buffers and open
// tables (and the heap is trimmed when it did), index partitions stay within
// the budget, open tables that keep their whole index and go beyond the
// pinned share are bounded, and closing gives everything back.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "lethe/db.h"
#include "lethe/env.h"
#include "lethe/memory_budget.h"
#include "lethe/statistics.h"

namespace lethe {
namespace {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%08d", i);
  return buf;
}
std::string Value(char tag, int i) { return std::string(1, tag) + std::to_string(i) + std::string(90, tag); }

class MemoryBudgetTest : public ::testing::Test {
 protected:
  std::shared_ptr<MemoryBudget> NewBudget(size_t capacity, double write_buffer_ratio, bool bound_readers = false) {
    std::shared_ptr<MemoryBudget> b;
    EXPECT_TRUE(MemoryBudget::New(capacity, write_buffer_ratio, &b, bound_readers).ok());
    return b;
  }
  // 40 level-0 tables of 1000 keys each (about 24 KiB of index and filters
  // each), every key read at least once.
  void FortyTablesRead(DB* db) {
    for (int f = 0; f < 40; f++) {
      Fill(db, 'x', f * 1000, f * 1000 + 1000);
      ASSERT_TRUE(db->Flush().ok());
    }
    std::string v;
    for (int i = 0; i < 40000; i += 3) {
      ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), Key(i), &v).ok());
      ASSERT_EQ(v, Value('x', i));
    }
  }
  // index_partition_size 0: each table's index in one partition, which its
  // reader keeps.
  std::unique_ptr<DB> Open(const std::string& name, std::shared_ptr<MemoryBudget> budget, bool background = true,
                           uint32_t page_size = 512, size_t index_partition_size = 4096) {
    Options o;
    o.env = env_.get();
    o.memory_budget = std::move(budget);
    o.write_buffer_size = size_t{1} << 30;  // only the budget flushes
    o.background_compactions = background;
    o.cf_defaults.page_size = page_size;
    o.cf_defaults.index_partition_size = index_partition_size;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, name, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return db;
  }
  static void Fill(DB* db, char tag, int from, int to) {
    for (int i = from; i < to; i++) ASSERT_TRUE(db->Put(WriteOptions(), db->DefaultColumnFamily(), Key(i), Value(tag, i)).ok());
  }
  static uint64_t Flushes(DB* db) { return db->GetStatistics().flushes; }

  std::unique_ptr<Env> env_ = NewMemEnv();
};

TEST_F(MemoryBudgetTest, NewRejectsBadArguments) {
  std::shared_ptr<MemoryBudget> b;
  EXPECT_TRUE(MemoryBudget::New(64 * kKiB - 1, 0.5, &b).IsInvalidArgument());
  EXPECT_TRUE(MemoryBudget::New(kMiB, 0, &b).IsInvalidArgument());
  EXPECT_TRUE(MemoryBudget::New(kMiB, 1, &b).IsInvalidArgument());
  EXPECT_TRUE(MemoryBudget::New(kMiB, 0.0 / 0.0, &b).IsInvalidArgument());
  EXPECT_TRUE(MemoryBudget::New(kMiB, 0.5, &b).ok());
  EXPECT_EQ(b->GetUsage().capacity, kMiB);
}

// Both databases have table 5 at the same offsets; a shared cache keyed by
// file number alone would hand one the other's pages.
TEST_F(MemoryBudgetTest, DatabasesOnOneBudgetReadTheirOwnData) {
  auto budget = NewBudget(4 * kMiB, 0.5);
  auto a = Open("/a", budget, false);
  auto b = Open("/b", budget, false);
  Fill(a.get(), 'a', 0, 2000);
  Fill(b.get(), 'b', 0, 2000);
  ASSERT_TRUE(a->Flush().ok());
  ASSERT_TRUE(b->Flush().ok());
  for (DB* db : {a.get(), b.get()}) {
    const char tag = db == a.get() ? 'a' : 'b';
    for (int i = 0; i < 2000; i += 7) {
      std::string v;
      ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), Key(i), &v).ok());
      ASSERT_EQ(v, Value(tag, i));
    }
  }
  EXPECT_GT(a->GetStatistics().page_cache_hits + a->GetStatistics().page_cache_misses, 0u);
}

TEST_F(MemoryBudgetTest, WriteBuffersStayWithinTheirShare) {
  auto budget = NewBudget(4 * kMiB, 0.25);  // 1 MiB of write buffers
  auto a = Open("/a", budget);
  auto b = Open("/b", budget);
  size_t peak = 0;
  for (int round = 0; round < 40; round++) {
    Fill(a.get(), 'a', round * 1000, round * 1000 + 500);
    Fill(b.get(), 'b', round * 1000, round * 1000 + 500);
    peak = std::max(peak, budget->GetUsage().write_buffers);
  }
  // 4 MiB written each; the flushes come from the budget alone.
  EXPECT_GE(Flushes(a.get()), 2u);
  EXPECT_GE(Flushes(b.get()), 2u);
  // A memtable flushing plus one filling: at most twice the share.
  EXPECT_LE(peak, 2 * kMiB);
  EXPECT_GT(peak, 512 * kKiB);
  std::string v;
  ASSERT_TRUE(a->Get(ReadOptions(), a->DefaultColumnFamily(), Key(39000), &v).ok());
  EXPECT_EQ(v, Value('a', 39000));
}

// A write is charged what the memtable took from the allocator, not an
// estimate from the entry's size: small entries cost their skip-list node
// more than their bytes.
TEST_F(MemoryBudgetTest, WriteBuffersAreChargedWhatTheMemtableHolds) {
  auto budget = NewBudget(64 * kMiB, 0.5);  // no flush for these writes
  auto db = Open("/small", budget);
  for (int i = 0; i < 50000; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), db->DefaultColumnFamily(), Key(i), "v" + std::to_string(i % 10)).ok());
  }
  const uint64_t held = db->GetStatistics().column_families.at(0).memtable_bytes;
  const size_t charged = budget->GetUsage().write_buffers;
  ASSERT_EQ(0u, Flushes(db.get()));
  // Charges go in steps of 64 KiB; the first arena block came with the memtable.
  EXPECT_LE(charged, held);
  EXPECT_GE(charged + 128 * kKiB, held);
}

// A memtable counts until it is destroyed: flushed while an iterator still
// reads it, it keeps its memory, so it stays charged (and the page cache
// gives that room up) until the iterator lets it go.
TEST_F(MemoryBudgetTest, AFlushedMemtableCountsWhileAReaderHoldsIt) {
  auto budget = NewBudget(4 * kMiB, 0.5);  // flush due past 7/8 of 2 MiB
  auto db = Open("/db", budget, false);
  Fill(db.get(), 'x', 0, 10000);  // about 1.1 MiB
  const size_t written = budget->GetUsage().write_buffers;
  ASSERT_GT(written, kMiB);
  auto it = db->NewIterator(ReadOptions(), db->DefaultColumnFamily());
  ASSERT_TRUE(db->Flush().ok());
  MemoryBudget::Usage held = budget->GetUsage();
  EXPECT_GE(held.flushed_write_buffers, written);
  EXPECT_EQ(held.write_buffers, held.flushed_write_buffers);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), Key(0));
  it.reset();
  EXPECT_EQ(budget->GetUsage().flushed_write_buffers, 0u);
  EXPECT_EQ(budget->GetUsage().write_buffers, 0u);
  // Without a reader the flush lets it go at once.
  Fill(db.get(), 'y', 0, 1000);
  ASSERT_TRUE(db->Flush().ok());
  EXPECT_EQ(budget->GetUsage().write_buffers, 0u);
}

// An iterator at a snapshot keeps no memtable whose entries are all newer
// than the snapshot: one created while the mutable memtable was empty, or
// after writes that followed the snapshot, lets that memtable go when it is
// flushed, and still reads the snapshot's state.
TEST_F(MemoryBudgetTest, AnIteratorKeepsNoMemtableBegunAfterItsSnapshot) {
  auto budget = NewBudget(4 * kMiB, 0.5);
  auto db = Open("/db", budget, false);
  Fill(db.get(), 'x', 0, 100);
  ASSERT_TRUE(db->Flush().ok());
  ReadOptions at;
  at.snapshot = db->GetSnapshot();
  auto before_writes = db->NewIterator(at, db->DefaultColumnFamily());
  Fill(db.get(), 'y', 0, 10000);  // about 1.1 MiB
  auto after_writes = db->NewIterator(at, db->DefaultColumnFamily());
  ASSERT_GT(budget->GetUsage().write_buffers, kMiB);
  ASSERT_TRUE(db->Flush().ok());
  EXPECT_EQ(budget->GetUsage().flushed_write_buffers, 0u);
  EXPECT_EQ(budget->GetUsage().write_buffers, 0u);
  for (auto* it : {before_writes.get(), after_writes.get()}) {
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
      ASSERT_EQ(it->value(), Value('x', n));
    }
    EXPECT_TRUE(it->status().ok());
    EXPECT_EQ(n, 100);
  }
  db->ReleaseSnapshot(at.snapshot);
}

TEST_F(MemoryBudgetTest, AnIdleDatabaseFlushesWhenAnotherNeedsTheRoom) {
  auto budget = NewBudget(4 * kMiB, 0.25);  // flush due past 7/8 MiB of mutable memtables
  auto idle = Open("/idle", budget);
  auto busy = Open("/busy", budget);
  Fill(idle.get(), 'i', 0, 6000);  // about 700 KiB
  ASSERT_EQ(Flushes(idle.get()), 0u);
  Fill(busy.get(), 'b', 0, 3000);  // the idle one holds the largest memtable
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Flushes(idle.get()) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(Flushes(idle.get()), 1u);
  EXPECT_EQ(Flushes(busy.get()), 0u);
  EXPECT_LT(budget->GetUsage().write_buffers, 512 * kKiB);
}

TEST_F(MemoryBudgetTest, PageCacheGivesWayToWriteBuffersAndTables) {
  auto budget = NewBudget(2 * kMiB, 0.5);
  auto db = Open("/db", budget, false, 4096);
  Fill(db.get(), 'x', 0, 30000);  // about 3 MiB
  ASSERT_TRUE(db->Flush().ok());
  auto read_all = [&] {
    std::string v;
    for (int i = 0; i < 30000; i++) ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), Key(i), &v).ok());
  };
  read_all();
  // Slack: each of the 16 shards keeps its newest page.
  const size_t slack = 16 * kKiB;
  MemoryBudget::Usage u = budget->GetUsage();
  EXPECT_GT(u.table_readers, 0u);
  EXPECT_GT(u.page_cache, kMiB / 2);
  EXPECT_LE(u.page_cache + u.table_readers + u.write_buffers, u.capacity + kMiB / 16 + slack);
  const uint64_t flushes = db->GetStatistics().flushes;
  Fill(db.get(), 'y', 100000, 105000);  // about 600 KiB, below the flush rule
  read_all();
  u = budget->GetUsage();
  EXPECT_GT(u.write_buffers, 400 * kKiB);
  EXPECT_EQ(db->GetStatistics().flushes, flushes);
  EXPECT_LE(u.page_cache + u.table_readers + u.write_buffers, u.capacity + kMiB / 16 + slack);
  DbStatistics st = db->GetStatistics();
  EXPECT_EQ(st.memory_budget_bytes, 2 * kMiB);
  EXPECT_EQ(st.memory_write_buffer_bytes, u.write_buffers);
}

// Memtables map their memory apart from the heap, so the pages the cache
// frees for them stay resident until the heap is trimmed: the flush thread
// trims once the cache gave way by a sixteenth of the budget (at least
// 1 MiB), without waiting for a flush.
TEST_F(MemoryBudgetTest, ThePageCacheGivingWayToMemtablesTrimsTheHeap) {
  auto budget = NewBudget(8 * kMiB, 0.5);
  auto db = Open("/db", budget, false, 4096);
  Fill(db.get(), 'x', 0, 60000);  // about 6 MiB
  ASSERT_TRUE(db->Flush().ok());
  std::string v;
  for (int i = 0; i < 60000; i++) ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), Key(i), &v).ok());
  ASSERT_GT(budget->GetUsage().page_cache, 4 * kMiB);
  // Flushes and compactions trim too: wait until the one after Flush() is counted, or its interval passed.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const DbStatistics before = db->GetStatistics();
  const size_t pages = budget->GetUsage().page_cache;
  Fill(db.get(), 'y', 100000, 120000);  // about 2 MiB, below the flush rule
  ASSERT_LT(budget->GetUsage().page_cache + kMiB, pages);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (db->GetStatistics().heap_trims == before.heap_trims && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const DbStatistics after = db->GetStatistics();
  EXPECT_GT(after.heap_trims, before.heap_trims);
  EXPECT_GT(after.heap_trim_micros, before.heap_trim_micros) << "a trim is timed";
  EXPECT_EQ(after.flushes, before.flushes);
  EXPECT_EQ(after.compactions_level0 + after.compactions_saturation, before.compactions_level0 + before.compactions_saturation);
}

// The default: tables keep their whole index while the tables kept open take
// at most 3/4 of what the write buffers leave; later tables keep only their
// top-level index, and the index partitions a lookup needs live in the page
// cache. Index and filters stay within the budget however many tables there
// are.
TEST_F(MemoryBudgetTest, IndexPartitionsStayWithinTheBudget) {
  auto budget = NewBudget(768 * kKiB, 0.5);
  auto db = Open("/db", budget, false);
  FortyTablesRead(db.get());
  MemoryBudget::Usage u = budget->GetUsage();
  const DbStatistics st = db->GetStatistics();
  // About 0.9 MiB of index and filters in 40 tables of about 8 partitions:
  // some tables keep theirs (288 KiB, and a table opening meanwhile), the
  // others read partitions.
  EXPECT_EQ(u.pinned_table_readers, u.table_readers);
  EXPECT_GT(u.table_readers, 192 * kKiB);
  EXPECT_LE(u.table_readers, 288 * kKiB + 64 * kKiB);
  EXPECT_GT(st.index_partition_reads, 200u);
  EXPECT_GT(u.page_cache, 0u);
  // Slack: each of the 64 shards keeps its newest entry.
  EXPECT_LE(u.page_cache + u.table_readers + u.write_buffers, u.capacity + 64 * 2 * kKiB);
}

// Tables that keep their whole index stay open for good and are counted:
// past the capacity, the pages give way down to an eighth.
TEST_F(MemoryBudgetTest, TablesStayOpenAndSqueezeThePagesToTheirFloor) {
  auto budget = NewBudget(768 * kKiB, 0.5);
  auto db = Open("/db", budget, false, 512, /*index_partition_size=*/0);
  FortyTablesRead(db.get());
  MemoryBudget::Usage u = budget->GetUsage();
  EXPECT_GT(u.table_readers, u.capacity);
  EXPECT_EQ(u.pinned_table_readers, u.table_readers);
  EXPECT_GT(u.page_cache, 0u);
  EXPECT_LE(u.page_cache, u.capacity / 8 + 16 * kKiB);
}

TEST_F(MemoryBudgetTest, BoundTablesStayWithinTheirShareAndClosingGivesAllBack) {
  auto budget = NewBudget(2 * kMiB, 0.5, true);  // tables: 512 KiB pinned, 768 KiB in all
  {
    auto db = Open("/db", budget, false, 512, /*index_partition_size=*/0);
    FortyTablesRead(db.get());
    MemoryBudget::Usage u = budget->GetUsage();
    EXPECT_GT(u.pinned_table_readers, 0u);
    EXPECT_LE(u.pinned_table_readers, 512 * kKiB);
    // Past the pinned share, readers live in a cache of 768 KiB less the
    // pinned ones.
    EXPECT_GT(u.table_readers, u.pinned_table_readers);
    EXPECT_LE(u.table_readers, 768 * kKiB);
  }
  MemoryBudget::Usage u = budget->GetUsage();
  EXPECT_EQ(u.table_readers, 0u);
  EXPECT_EQ(u.pinned_table_readers, 0u);
  EXPECT_EQ(u.write_buffers, 0u);
  EXPECT_EQ(u.page_cache, 0u);
}

TEST_F(MemoryBudgetTest, ADatabaseWithoutABudgetReportsItsOwn) {
  Options o;
  o.env = env_.get();
  o.page_cache_bytes = 3 * kMiB;
  o.cf_defaults.page_size = 512;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "/own", &db).ok());
  Fill(db.get(), 'x', 0, 3000);
  ASSERT_TRUE(db->Flush().ok());
  std::string v;
  ASSERT_TRUE(db->Get(ReadOptions(), db->DefaultColumnFamily(), Key(5), &v).ok());
  DbStatistics st = db->GetStatistics();
  EXPECT_EQ(st.memory_budget_bytes, 3 * kMiB);
  EXPECT_GT(st.memory_table_reader_bytes, 0u);
  EXPECT_EQ(st.memory_pinned_table_reader_bytes, st.memory_table_reader_bytes);
  EXPECT_GT(st.memory_page_cache_bytes, 0u);
}

}  // namespace
}  // namespace lethe
