// SkipList: the memtable's ordered index of arena-allocated entries.
//
// Thread-safety: one writer at a time (externally synchronized); readers need
// no lock and may run concurrently with the writer. Nodes are never removed.
// Invariant: a node is fully initialized before it is published with a
// release store, and readers load links with acquire.
//
// Fingers: an insert may name a group its key belongs to (the memtable: the
// key's sort key, whose versions sit side by side, newest first). The list
// remembers, per group hash in a direct-mapped table, the nodes around the
// place where the group's next insert goes at the two lowest levels, and links
// a node of height <= 2 there when the nodes still fit: each is checked
// against the key and its neighbour, so a stale or colliding finger costs a
// search from the head and is never wrong. A search from the head misses the
// CPU cache once per node it visits (dozens in a large memtable); a finger
// that fits, about twice. The table grows with the list, one slot per 8 nodes
// up to 128 Ki slots (5 MiB, from a million nodes on), and is charged in
// FingerBytes().
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>

#include "memtable/arena.h"
#include "util/random.h"

namespace lethe {

template <typename Key, class Comparator>
class SkipList {
 private:
  struct Node;

 public:
  SkipList(Comparator cmp, Arena* arena)
      : compare_(cmp), arena_(arena), head_(NewNode(Key(), kMaxHeight)), rnd_(0xdeadbeef) {
    for (int i = 0; i < kMaxHeight; i++) head_->SetNext(i, nullptr);
  }

  // REQUIRES: no equal key is in the list (internal keys are unique).
  void Insert(const Key& key) {
    int height = RandomHeight();
    Link(NewNode(key, height), height);
  }

  // Inserts a key that `fill` writes into `len` bytes placed right behind the new node's links,
  // so that a search step reads one place in memory instead of two (the node, then its key).
  // Only for lists whose Key is a pointer to the key's bytes.
  // `group`: a hash of the group the key belongs to (see Fingers above), 0 for none.
  template <typename Fill>
  void InsertInline(size_t len, uint64_t group, Fill&& fill) {
    int height = RandomHeight();
    size_t links = NodeBytes(height);
    char* mem = arena_->AllocateAligned(links + len, alignof(Node));
    char* key = mem + links;
    fill(key);
    Node* x = new (mem) Node(key);
    if (group == 0) {
      Link(x, height);
    } else {
      LinkByFinger(x, height, group);
    }
  }

  // Bytes of the finger table (read concurrently with the writer).
  size_t FingerBytes() const { return finger_bytes_.load(std::memory_order_relaxed); }
  // Inserts linked by a finger instead of a search (for tests and statistics).
  uint64_t finger_links() const { return finger_links_.load(std::memory_order_relaxed); }

  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list) {}
    bool Valid() const { return node_ != nullptr; }
    const Key& key() const { return node_->key; }
    void Next() { node_ = node_->Next(0); }
    // Nodes have no back links: a step back searches from the head.
    void Prev() { node_ = list_->NodeOrNull(list_->FindLessThan(node_->key)); }
    void Seek(const Key& target) { node_ = list_->FindGreaterOrEqual(target, nullptr); }
    void SeekToFirst() { node_ = list_->head_->Next(0); }
    void SeekToLast() { node_ = list_->NodeOrNull(list_->FindLast()); }

   private:
    const SkipList* list_;
    Node* node_ = nullptr;
  };

 private:
  static constexpr int kMaxHeight = 12;

  struct Node {
    explicit Node(const Key& k) : key(k) {}
    Key const key;
    Node* Next(int n) { return next_[n].load(std::memory_order_acquire); }
    void SetNext(int n, Node* x) { next_[n].store(x, std::memory_order_release); }
    Node* NoBarrierNext(int n) { return next_[n].load(std::memory_order_relaxed); }
    void NoBarrierSetNext(int n, Node* x) { next_[n].store(x, std::memory_order_relaxed); }

   private:
    std::atomic<Node*> next_[1];  // really `height` links, allocated with the node
  };

  static size_t NodeBytes(int height) {
    return sizeof(Node) + sizeof(std::atomic<Node*>) * (height - 1);
  }

  Node* NewNode(const Key& key, int height) {
    char* mem = arena_->AllocateAligned(NodeBytes(height), alignof(Node));
    return new (mem) Node(key);
  }

  // Links a new node in at every level of its height. Fills prev (when not
  // null) with the node before x at every level.
  void Link(Node* x, int height, Node** prev_out = nullptr) {
    Node* local[kMaxHeight];
    Node** prev = prev_out != nullptr ? prev_out : local;
    for (int i = 0; i < kMaxHeight; i++) prev[i] = head_;
    [[maybe_unused]] Node* next = FindGreaterOrEqual(x->key, prev);
    assert(next == nullptr || compare_(x->key, next->key) != 0);
    int max_height = max_height_.load(std::memory_order_relaxed);
    if (height > max_height) {
      for (int i = max_height; i < height; i++) prev[i] = head_;
      max_height_.store(height, std::memory_order_relaxed);
    }
    for (int i = 0; i < height; i++) {
      x->NoBarrierSetNext(i, prev[i]->NoBarrierNext(i));
      prev[i]->SetNext(i, x);
    }
  }

  static constexpr int kFingerLevels = 2;
  static constexpr uint64_t kNodesPerFinger = 8;
  static constexpr size_t kMinFingers = 256;
  static constexpr size_t kMaxFingers = 128 * 1024;

  // Around the place of a group's next insert: at level i, prev[i] links to next[i].
  struct Finger {
    uint64_t group = 0;  // 0: empty
    Node* prev[kFingerLevels];
    Node* next[kFingerLevels];
  };

  void LinkByFinger(Node* x, int height, uint64_t group) {
    GrowFingers();
    Finger* f = fingers_ == nullptr ? nullptr : &fingers_[group & (num_fingers_ - 1)];
    if (f != nullptr && f->group == group && Fits(*f, x->key, height)) {
      for (int i = 0; i < height; i++) {
        x->NoBarrierSetNext(i, f->next[i]);
        f->prev[i]->SetNext(i, x);
        f->next[i] = x;
      }
      finger_links_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    Node* prev[kMaxHeight];
    Link(x, height, prev);
    if (f == nullptr) return;
    f->group = group;
    for (int i = 0; i < kFingerLevels; i++) {
      f->prev[i] = prev[i];
      f->next[i] = prev[i]->NoBarrierNext(i);
    }
  }

  // Whether x's key goes between the finger's nodes at each of its levels.
  bool Fits(const Finger& f, const Key& key, int height) const {
    if (height > kFingerLevels || height > max_height_.load(std::memory_order_relaxed)) return false;
    for (int i = 0; i < height; i++) {
      Node* p = f.prev[i];
      Node* n = f.next[i];
      if (p->NoBarrierNext(i) != n) return false;
      if (p != head_ && compare_(p->key, key) >= 0) return false;
      if (n != nullptr && compare_(key, n->key) >= 0) return false;
    }
    return true;
  }

  // One slot per kNodesPerFinger nodes, in powers of two; a new table starts empty.
  void GrowFingers() {
    nodes_++;
    size_t want = num_fingers_ == 0 ? kMinFingers : num_fingers_ * 2;
    if (want > kMaxFingers || nodes_ < want * kNodesPerFinger) return;
    fingers_ = std::make_unique<Finger[]>(want);
    num_fingers_ = want;
    finger_bytes_.store(want * sizeof(Finger), std::memory_order_relaxed);
  }

  int RandomHeight() {
    // Branching factor 4, as LevelDB: about 1.33 links per node.
    int height = 1;
    while (height < kMaxHeight && rnd_.OneIn(4)) height++;
    return height;
  }

  Node* FindGreaterOrEqual(const Key& key, Node** prev) const {
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    while (true) {
      Node* next = x->Next(level);
      // The step after this one reads next's successor: fetch it while the key is compared.
      if (next != nullptr) __builtin_prefetch(next->NoBarrierNext(level));
      if (next != nullptr && compare_(next->key, key) < 0) {
        x = next;
      } else {
        if (prev != nullptr) prev[level] = x;
        if (level == 0) return next;
        level--;
      }
    }
  }

  // The last node whose key is < key (head_ if none).
  Node* FindLessThan(const Key& key) const {
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr && compare_(next->key, key) < 0) {
        x = next;
      } else if (level == 0) {
        return x;
      } else {
        level--;
      }
    }
  }

  // The last node (head_ if the list is empty).
  Node* FindLast() const {
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    while (true) {
      Node* next = x->Next(level);
      if (next != nullptr) {
        x = next;
      } else if (level == 0) {
        return x;
      } else {
        level--;
      }
    }
  }

  Node* NodeOrNull(Node* x) const { return x == head_ ? nullptr : x; }

  Comparator const compare_;
  Arena* const arena_;
  Node* const head_;
  std::atomic<int> max_height_{1};
  Random rnd_;
  // Fingers: written by the writer only.
  std::unique_ptr<Finger[]> fingers_;
  size_t num_fingers_ = 0;
  uint64_t nodes_ = 0;  // inserted through LinkByFinger
  std::atomic<size_t> finger_bytes_{0};
  std::atomic<uint64_t> finger_links_{0};
};

}  // namespace lethe
