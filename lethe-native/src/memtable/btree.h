// BTree: the memtable's ordered index of arena-allocated entries, a B+tree
// whose readers take no lock.
//
// Why not a skip list: an insert into a skip list of a million entries visits
// some 30 nodes spread over all of its memory, most of them a cache miss. Here
// an insert or lookup reads the few inner nodes above its leaf (the upper ones
// stay cached) and one leaf, and compares mostly 8-byte numbers held in the
// nodes instead of keys behind pointers.
//
// Layout: a leaf holds up to kLeafSlots entries in key order, an inner node up
// to kInnerSlots separators and one child more. Each slot keeps, besides the
// entry, a prefix: 8 bytes of the user key, big-endian, starting at the node's
// `skip`. All keys below a node lie within the bounds its parent gave it, so
// they share the first lcp(lower bound, upper bound) bytes of their user keys,
// and the node skips those: keys that agree on a long head (a key group and a
// timestamp) still differ in their prefixes. Comparing two prefixes orders two
// keys unless they are equal; then the keys themselves are compared.
//
// Concurrency: one writer at a time (externally synchronized), readers
// concurrently. Every node carries a version, odd while the writer changes it.
// A reader notes the version, reads, and checks the version again (a
// sequence lock); if it changed, the reader starts over. Descending, it checks
// the parent again after noting the child's version, so a split between the
// two is seen. Slots are atomics (relaxed, so a torn read is harmless: the
// check rejects it); entry pointers are stored with release and loaded with
// acquire, so an entry's bytes are complete when a reader reaches them. Nodes
// and entries are never freed before the tree, so a stale pointer still
// points to memory of the right kind. A split keeps the lower half in place and
// moves the upper half to a new node: a leaf never loses its first key, the
// first leaf stays first, and the chain of leaves (next, prev) stays whole.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <thread>

#include "memtable/arena.h"
#include "util/shared_prefix.h"

namespace lethe {

// Keys: Compare(a, b) orders two entries (< 0, 0, > 0); UserKey(e) is the part
// of an entry's key that the order compares bytewise first, a prefix of which
// decides the order when two user keys differ in it.
template <class Keys>
class BTree {
  struct Node;
  struct Leaf;
  struct Inner;

 public:
  BTree(Keys keys, Arena* arena) : keys_(keys), arena_(arena) {
    first_ = NewNode<Leaf>(nullptr, nullptr);
    root_.store(first_, std::memory_order_release);
  }
  BTree(const BTree&) = delete;
  BTree& operator=(const BTree&) = delete;

  // REQUIRES: no equal key is in the tree; key stays valid as long as the tree.
  // Returns whether no key with the same user key was in the tree.
  bool Insert(const char* key);

  class Iterator {
   public:
    explicit Iterator(const BTree* tree) : tree_(tree) {}
    bool Valid() const { return key_ != nullptr; }
    const char* key() const { return key_; }
    void Seek(const char* target);  // the first key >= target
    void SeekToFirst() { MoveTo(tree_->first_); }
    void SeekToLast();
    void Next();
    void Prev();

   private:
    // Positions at the first key of `leaf` (a next leaf), or past the end if null.
    void MoveTo(const Leaf* leaf);
    bool Step(int delta);  // within the leaf or to a neighbour; false: start over
    void Refind(int delta);

    const BTree* tree_;
    const Leaf* leaf_ = nullptr;
    uint64_t version_ = 0;
    uint32_t pos_ = 0;
    const char* key_ = nullptr;
  };

 private:
  static constexpr uint32_t kLeafSlots = 32;
  static constexpr uint32_t kInnerSlots = 32;
  // How many slots ahead an iterator asks for an entry's memory: entries lie
  // in the arena in the order they were written, not in key order, so each
  // step of a scan would otherwise wait for memory.
  static constexpr uint32_t kPrefetchAhead = 8;

  struct Slot {
    std::atomic<uint64_t> prefix{0};
    std::atomic<const char*> key{nullptr};
  };

  struct Node {
    explicit Node(bool is_leaf) : leaf(is_leaf) {}
    std::atomic<uint64_t> version{0};
    std::atomic<uint32_t> count{0};
    std::atomic<uint32_t> skip{0};
    const bool leaf;
    // The bounds of the keys below (entries; null: open). Writer only.
    const char* low = nullptr;
    const char* high = nullptr;
  };
  struct Leaf : Node {
    Leaf() : Node(true) {}
    Slot slots[kLeafSlots];
    std::atomic<Leaf*> next{nullptr};
    std::atomic<Leaf*> prev{nullptr};
  };
  struct Inner : Node {
    Inner() : Node(false) {}
    Slot slots[kInnerSlots];  // separators: child i holds keys in [slots[i-1], slots[i])
    std::atomic<Node*> child[kInnerSlots + 1] = {};
  };

  static uint32_t Capacity(const Node* n) { return n->leaf ? kLeafSlots : kInnerSlots; }
  static Slot* SlotsOf(Node* n) {
    return n->leaf ? static_cast<Leaf*>(n)->slots : static_cast<Inner*>(n)->slots;
  }
  static const Slot* SlotsOf(const Node* n) { return SlotsOf(const_cast<Node*>(n)); }
  static uint32_t CountOf(const Node* n) {
    return std::min(n->count.load(std::memory_order_relaxed), Capacity(n));
  }

  // ---- versions (a sequence lock per node) ----
  static uint64_t StableVersion(const Node* n) {
    for (int spins = 0;; spins++) {
      uint64_t v = n->version.load(std::memory_order_acquire);
      if ((v & 1) == 0) return v;
      if (spins > 64) std::this_thread::yield();
    }
  }
  static bool Unchanged(const Node* n, uint64_t v) {
    std::atomic_thread_fence(std::memory_order_acquire);
    return n->version.load(std::memory_order_relaxed) == v;
  }
  static void Lock(Node* n) {
    n->version.store(n->version.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  static void Unlock(Node* n) {
    n->version.store(n->version.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // ---- prefixes ----
  static uint64_t PrefixAt(std::string_view user_key, uint32_t skip) {
    if (skip >= user_key.size()) return 0;
    unsigned char buf[8] = {};
    std::memcpy(buf, user_key.data() + skip, std::min<size_t>(8, user_key.size() - skip));
    uint64_t p;
    std::memcpy(&p, buf, 8);
    return __builtin_bswap64(p);
  }
  uint32_t SkipFor(const char* low, const char* high) const {
    if (low == nullptr || high == nullptr) return 0;
    return static_cast<uint32_t>(SharedPrefixLength(keys_.UserKey(low), keys_.UserKey(high)));
  }
  // < 0 when the slot's key orders before target (whose prefix at the node's skip is tp).
  int CompareSlot(const Slot& s, uint64_t tp, const char* target) const {
    uint64_t p = s.prefix.load(std::memory_order_relaxed);
    if (p != tp) return p < tp ? -1 : 1;
    const char* k = s.key.load(std::memory_order_acquire);
    return k == nullptr ? 1 : keys_.Compare(k, target);  // null: a torn read, rejected later
  }
  // The first slot whose key is >= target (strict: > target).
  uint32_t Bound(const Node* n, const char* target, std::string_view user, bool strict) const {
    const Slot* s = SlotsOf(n);
    uint64_t tp = PrefixAt(user, n->skip.load(std::memory_order_relaxed));
    uint32_t lo = 0, hi = CountOf(n);
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      int c = CompareSlot(s[mid], tp, target);
      if (c < 0 || (strict && c == 0)) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  uint32_t ChildIndex(const Inner* n, const char* target, std::string_view user) const {
    return Bound(n, target, user, /*strict=*/true);
  }

  // ---- reading ----
  // The leaf that holds target's place (target null: the last leaf), with its version; user is
  // target's user key.
  const Leaf* FindLeaf(const char* target, std::string_view user, uint64_t* version) const;

  // ---- writing ----
  bool NeighbourHasUser(const Leaf* n, uint32_t pos, std::string_view user) const;
  template <class N>
  N* NewNode(const char* low, const char* high) {
    N* n = new (arena_->AllocateAligned(sizeof(N), 64)) N();
    n->low = low;
    n->high = high;
    n->skip.store(SkipFor(low, high), std::memory_order_relaxed);
    return n;
  }
  void Fill(Node* n, uint32_t i, const char* key) const {
    Slot& s = SlotsOf(n)[i];
    s.prefix.store(PrefixAt(keys_.UserKey(key), n->skip.load(std::memory_order_relaxed)),
                   std::memory_order_relaxed);
    s.key.store(key, std::memory_order_release);
  }
  void Move(Node* to, uint32_t at, const Node* from, uint32_t i) const;
  void SetSkip(Node* n);
  void SplitRoot(const char* key);
  void SplitChild(Inner* parent, uint32_t i, const char* key);
  Node* SplitOff(Node* n, uint32_t at, const char** sep);
  uint32_t SplitPoint(const Node* n, const char* key) const;
  void Shift(Node* n, uint32_t pos, const char* key, Node* right_child);

  const Keys keys_;
  Arena* const arena_;
  Leaf* first_;  // never changes: a split keeps the lower half in place
  std::atomic<Node*> root_{nullptr};
};

// ---------------------------------------------------------------- reading

template <class Keys>
const typename BTree<Keys>::Leaf* BTree<Keys>::FindLeaf(const char* target, std::string_view user,
                                                        uint64_t* version) const {
  while (true) {
    const Node* n = root_.load(std::memory_order_acquire);
    uint64_t v = StableVersion(n);
    if (root_.load(std::memory_order_acquire) != n) continue;
    bool restart = false;
    while (!n->leaf && !restart) {
      const Inner* in = static_cast<const Inner*>(n);
      uint32_t i = target == nullptr ? CountOf(in) : ChildIndex(in, target, user);
      const Node* c = in->child[i].load(std::memory_order_acquire);
      if (c == nullptr || !Unchanged(n, v)) {
        restart = true;
        break;
      }
      uint64_t cv = StableVersion(c);
      if (!Unchanged(n, v)) restart = true;
      n = c;
      v = cv;
    }
    if (restart) continue;
    *version = v;
    return static_cast<const Leaf*>(n);
  }
}

template <class Keys>
void BTree<Keys>::Iterator::Seek(const char* target) {
  const std::string_view user = tree_->keys_.UserKey(target);
  while (true) {
    leaf_ = tree_->FindLeaf(target, user, &version_);
    uint32_t pos = tree_->Bound(leaf_, target, user, false);
    if (pos < CountOf(leaf_)) {
      const char* k = leaf_->slots[pos].key.load(std::memory_order_acquire);
      if (k == nullptr || !Unchanged(leaf_, version_)) continue;
      pos_ = pos;
      key_ = k;
      return;
    }
    const Leaf* next = leaf_->next.load(std::memory_order_acquire);
    if (!Unchanged(leaf_, version_)) continue;
    MoveTo(next);
    if (key_ == nullptr && next != nullptr) continue;  // next changed meanwhile
    return;
  }
}

template <class Keys>
void BTree<Keys>::Iterator::MoveTo(const Leaf* leaf) {
  key_ = nullptr;
  while (leaf != nullptr) {
    uint64_t v = StableVersion(leaf);
    uint32_t count = CountOf(leaf);
    const char* k = count > 0 ? leaf->slots[0].key.load(std::memory_order_acquire) : nullptr;
    const Leaf* next = leaf->next.load(std::memory_order_acquire);
    if (!Unchanged(leaf, v)) continue;
    if (count == 0) {  // only the first leaf of an empty tree
      leaf = next;
      continue;
    }
    if (k == nullptr) return;  // cannot happen once validated; treated as "start over"
    leaf_ = leaf;
    version_ = v;
    pos_ = 0;
    key_ = k;
    for (uint32_t i = 1; i <= kPrefetchAhead && i < count; i++) {
      __builtin_prefetch(leaf->slots[i].key.load(std::memory_order_relaxed));
    }
    return;
  }
}

template <class Keys>
void BTree<Keys>::Iterator::SeekToLast() {
  while (true) {
    leaf_ = tree_->FindLeaf(nullptr, std::string_view(), &version_);
    uint32_t count = CountOf(leaf_);
    const char* k = count > 0 ? leaf_->slots[count - 1].key.load(std::memory_order_acquire) : nullptr;
    if (!Unchanged(leaf_, version_)) continue;
    pos_ = count - 1;
    key_ = count > 0 ? k : nullptr;
    return;
  }
}

// One step within the leaf, or to the neighbour leaf, while nothing changed.
template <class Keys>
bool BTree<Keys>::Iterator::Step(int delta) {
  uint32_t count = CountOf(leaf_);
  int64_t pos = static_cast<int64_t>(pos_) + delta;
  if (pos >= 0 && pos < static_cast<int64_t>(count)) {
    const char* k = leaf_->slots[pos].key.load(std::memory_order_acquire);
    if (k == nullptr || !Unchanged(leaf_, version_)) return false;
    const int64_t ahead = pos + delta * static_cast<int64_t>(kPrefetchAhead);
    if (ahead >= 0 && ahead < static_cast<int64_t>(count)) {
      __builtin_prefetch(leaf_->slots[ahead].key.load(std::memory_order_relaxed));
    }
    pos_ = static_cast<uint32_t>(pos);
    key_ = k;
    return true;
  }
  const Leaf* to = (delta > 0 ? leaf_->next : leaf_->prev).load(std::memory_order_acquire);
  if (!Unchanged(leaf_, version_)) return false;
  if (delta > 0) {
    MoveTo(to);
    return key_ != nullptr || to == nullptr;
  }
  if (to == nullptr) {
    key_ = nullptr;
    return true;
  }
  uint64_t v = StableVersion(to);
  uint32_t n = CountOf(to);
  const char* k = n > 0 ? to->slots[n - 1].key.load(std::memory_order_acquire) : nullptr;
  // The previous leaf must still end where this one starts (it may have split since).
  const Leaf* back = to->next.load(std::memory_order_acquire);
  if (k == nullptr || back != leaf_ || !Unchanged(to, v)) return false;
  leaf_ = to;
  version_ = v;
  pos_ = n - 1;
  key_ = k;
  return true;
}

// The leaf changed under the iterator: find the current key again, then step.
template <class Keys>
void BTree<Keys>::Iterator::Refind(int delta) {
  const char* current = key_;
  while (true) {
    Seek(current);  // the key is in the tree, so this lands on it
    if (key_ == current && Step(delta)) return;
  }
}

template <class Keys>
void BTree<Keys>::Iterator::Next() {
  if (!Step(1)) Refind(1);
}

template <class Keys>
void BTree<Keys>::Iterator::Prev() {
  if (!Step(-1)) Refind(-1);
}

// ---------------------------------------------------------------- writing

template <class Keys>
bool BTree<Keys>::Insert(const char* key) {
  const std::string_view user = keys_.UserKey(key);
  if (CountOf(root_.load(std::memory_order_relaxed)) == Capacity(root_.load(std::memory_order_relaxed))) {
    SplitRoot(key);
  }
  Node* n = root_.load(std::memory_order_relaxed);
  while (!n->leaf) {
    Inner* in = static_cast<Inner*>(n);
    uint32_t i = ChildIndex(in, key, user);
    Node* c = in->child[i].load(std::memory_order_relaxed);
    if (CountOf(c) == Capacity(c)) {  // full: split before descending, the parent has room
      SplitChild(in, i, key);
      i = ChildIndex(in, key, user);
      c = in->child[i].load(std::memory_order_relaxed);
    }
    n = c;
  }
  uint32_t pos = Bound(n, key, user, false);
  const bool fresh = !NeighbourHasUser(static_cast<const Leaf*>(n), pos, user);
  Lock(n);
  Shift(n, pos, key, nullptr);
  Unlock(n);
  return fresh;
}

// Whether the keys on either side of slot pos of leaf n (where a key of user
// key `user` goes) have that user key; the versions of a user key sit side by
// side, possibly across a leaf boundary. Only the writer calls it.
template <class Keys>
bool BTree<Keys>::NeighbourHasUser(const Leaf* n, uint32_t pos, std::string_view user) const {
  // The slot's prefix first: where it differs, so do the user keys, and the
  // entry's memory is not touched (an insert of a new key would miss the
  // cache on it).
  auto has = [&](const Node* leaf, uint32_t i) {
    if (leaf == nullptr || i >= CountOf(leaf)) return false;
    const Slot& slot = SlotsOf(leaf)[i];
    if (slot.prefix.load(std::memory_order_relaxed) != PrefixAt(user, leaf->skip.load(std::memory_order_relaxed))) {
      return false;
    }
    const char* k = slot.key.load(std::memory_order_relaxed);
    return k != nullptr && keys_.UserKey(k) == user;
  };
  const Leaf* next = n->next.load(std::memory_order_relaxed);
  const Leaf* prev = n->prev.load(std::memory_order_relaxed);
  const bool after = pos < CountOf(n) ? has(n, pos) : has(next, 0);
  const bool before = pos > 0 ? has(n, pos - 1) : (prev != nullptr && has(prev, CountOf(prev) - 1));
  return after || before;
}

// Writes key into slot pos (and right_child behind it in an inner node), moving the rest up.
// The caller holds n's lock.
template <class Keys>
void BTree<Keys>::Shift(Node* n, uint32_t pos, const char* key, Node* right_child) {
  uint32_t count = CountOf(n);
  for (uint32_t j = count; j > pos; j--) Move(n, j, n, j - 1);
  if (!n->leaf) {
    Inner* in = static_cast<Inner*>(n);
    for (uint32_t j = count + 1; j > pos + 1; j--) {
      in->child[j].store(in->child[j - 1].load(std::memory_order_relaxed), std::memory_order_release);
    }
    in->child[pos + 1].store(right_child, std::memory_order_release);
  }
  Fill(n, pos, key);
  n->count.store(count + 1, std::memory_order_relaxed);
}

// Copies slot i of `from` into slot `at` of `to`, keeping the prefix when both skip alike.
template <class Keys>
void BTree<Keys>::Move(Node* to, uint32_t at, const Node* from, uint32_t i) const {
  const Slot& s = SlotsOf(from)[i];
  const char* k = s.key.load(std::memory_order_relaxed);
  if (to->skip.load(std::memory_order_relaxed) == from->skip.load(std::memory_order_relaxed)) {
    SlotsOf(to)[at].prefix.store(s.prefix.load(std::memory_order_relaxed), std::memory_order_relaxed);
    SlotsOf(to)[at].key.store(k, std::memory_order_release);
  } else {
    Fill(to, at, k);
  }
}

// Recomputes n's skip from its bounds and its slots' prefixes when it grew (under n's lock).
template <class Keys>
void BTree<Keys>::SetSkip(Node* n) {
  uint32_t skip = SkipFor(n->low, n->high);
  if (skip == n->skip.load(std::memory_order_relaxed)) return;
  n->skip.store(skip, std::memory_order_relaxed);
  for (uint32_t i = 0; i < CountOf(n); i++) Fill(n, i, SlotsOf(n)[i].key.load(std::memory_order_relaxed));
}

// Where a full node splits: at the insert's place when it goes to either end of a leaf (so keys
// arriving in order fill nodes instead of leaving them half empty), else in the middle.
template <class Keys>
uint32_t BTree<Keys>::SplitPoint(const Node* n, const char* key) const {
  uint32_t count = CountOf(n);
  if (!n->leaf) return count / 2;
  uint32_t pos = Bound(n, key, keys_.UserKey(key), false);
  if (pos == count) return count - 1;
  if (pos == 0) return 1;
  return count / 2;
}

// Makes a node with n's slots from `at` on (a leaf) or after `at` (an inner node, whose
// slot `at` moves up as the separator), not yet reachable. Sets *sep.
template <class Keys>
typename BTree<Keys>::Node* BTree<Keys>::SplitOff(Node* n, uint32_t at, const char** sep) {
  uint32_t count = CountOf(n);
  *sep = SlotsOf(n)[at].key.load(std::memory_order_relaxed);
  if (n->leaf) {
    Leaf* r = NewNode<Leaf>(*sep, n->high);
    for (uint32_t i = at; i < count; i++) Move(r, i - at, n, i);
    r->count.store(count - at, std::memory_order_relaxed);
    r->next.store(static_cast<Leaf*>(n)->next.load(std::memory_order_relaxed), std::memory_order_relaxed);
    r->prev.store(static_cast<Leaf*>(n), std::memory_order_relaxed);
    return r;
  }
  Inner* in = static_cast<Inner*>(n);
  Inner* r = NewNode<Inner>(*sep, n->high);
  for (uint32_t i = at + 1; i < count; i++) Move(r, i - at - 1, n, i);
  for (uint32_t i = at + 1; i <= count; i++) {
    r->child[i - at - 1].store(in->child[i].load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  r->count.store(count - at - 1, std::memory_order_relaxed);
  return r;
}

// Splits the full child i of parent (which has room), under the locks of parent, the
// child and, for a leaf, the leaf after it (whose prev link changes): a reader sees the
// parent and the child either both before or both after.
template <class Keys>
void BTree<Keys>::SplitChild(Inner* parent, uint32_t i, const char* key) {
  Node* c = parent->child[i].load(std::memory_order_relaxed);
  uint32_t at = SplitPoint(c, key);
  const char* sep;
  Node* r = SplitOff(c, at, &sep);
  Leaf* after = c->leaf ? static_cast<Leaf*>(c)->next.load(std::memory_order_relaxed) : nullptr;
  Lock(parent);
  Lock(c);
  if (after != nullptr) Lock(after);
  c->count.store(at, std::memory_order_relaxed);
  c->high = sep;
  SetSkip(c);
  if (c->leaf) {
    static_cast<Leaf*>(c)->next.store(static_cast<Leaf*>(r), std::memory_order_release);
    if (after != nullptr) after->prev.store(static_cast<Leaf*>(r), std::memory_order_release);
  }
  Shift(parent, i, sep, r);
  if (after != nullptr) Unlock(after);
  Unlock(c);
  Unlock(parent);
}

// A full root gets a new root above it, which then splits it.
template <class Keys>
void BTree<Keys>::SplitRoot(const char* key) {
  Node* old = root_.load(std::memory_order_relaxed);
  Inner* root = NewNode<Inner>(nullptr, nullptr);
  root->child[0].store(old, std::memory_order_relaxed);
  Lock(old);  // readers that reached the old root start over once it has a new root
  root_.store(root, std::memory_order_release);
  Unlock(old);
  SplitChild(root, 0, key);
}

}  // namespace lethe
