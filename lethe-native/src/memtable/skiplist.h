// SkipList: the memtable's ordered index of arena-allocated entries.
//
// Thread-safety: one writer at a time (externally synchronized); readers need
// no lock and may run concurrently with the writer. Nodes are never removed.
// Invariant: a node is fully initialized before it is published with a
// release store, and readers load links with acquire.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>

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
  template <typename Fill>
  void InsertInline(size_t len, Fill&& fill) {
    int height = RandomHeight();
    size_t links = NodeBytes(height);
    char* mem = arena_->AllocateAligned(links + len, alignof(Node));
    char* key = mem + links;
    fill(key);
    Link(new (mem) Node(key), height);
  }

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

  // Links a new node in at every level of its height.
  void Link(Node* x, int height) {
    Node* prev[kMaxHeight];
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
};

}  // namespace lethe
