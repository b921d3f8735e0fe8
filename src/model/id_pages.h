// IdPages<T>: values indexed by dense ids 0..size()-1, appended in id order, that can give back
// the memory of ids no longer needed. A long replay adds a workload per job but holds only the
// jobs in flight; a vector indexed by id would keep (and, growing, copy) every job it has seen.
//
// Values live in pages of kPage ids. Retire(id) resets the value to T{} at once (what it points
// to is freed) and frees its page once every id of the page is retired, so the memory held grows
// with the ids alive and the pages they keep, not with size(). Ids are never reused: they stay
// the last tie-break of the engine's orders.
//
// Until the first Retire, it reads as a std::vector<T>: push_back, operator[], range-for.
// REQUIRES: no operator[] or iteration on a retired id (a freed page is not there to read);
// retired(id) says which are.
//
// Thread-safety: none (as a std::vector).
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace tessera {

template <class T>
class IdPages {
 public:
  static constexpr size_t kPageBits = 5;
  static constexpr size_t kPage = size_t{1} << kPageBits;

  IdPages() = default;
  IdPages(std::initializer_list<T> items) {
    for (const T& v : items) push_back(v);
  }
  IdPages(const IdPages& o) : size_(o.size_), retired_(o.retired_) {
    pages_.reserve(o.pages_.size());
    for (const auto& p : o.pages_) pages_.push_back(p ? std::make_unique<Page>(*p) : nullptr);
  }
  IdPages& operator=(const IdPages& o) {
    if (this != &o) *this = IdPages(o);
    return *this;
  }
  // A moved-from IdPages is empty, as a moved-from std::vector is in practice.
  IdPages(IdPages&& o) noexcept
      : pages_(std::move(o.pages_)),
        size_(std::exchange(o.size_, 0)),
        retired_(std::exchange(o.retired_, 0)) {
    o.pages_.clear();
  }
  IdPages& operator=(IdPages&& o) noexcept {
    if (this != &o) {
      pages_ = std::move(o.pages_);
      o.pages_.clear();
      size_ = std::exchange(o.size_, 0);
      retired_ = std::exchange(o.retired_, 0);
    }
    return *this;
  }
  IdPages& operator=(std::initializer_list<T> items) { return *this = IdPages(items); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Ids retired so far.
  size_t retired_count() const { return retired_; }

  T& operator[](size_t i) { return Slot(i); }
  const T& operator[](size_t i) const { return const_cast<IdPages*>(this)->Slot(i); }
  T& front() { return Slot(0); }
  const T& front() const { return (*this)[0]; }
  T& back() { return Slot(size_ - 1); }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(const T& v) { Next() = v; }
  void push_back(T&& v) { Next() = std::move(v); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    T& slot = Next();
    // A slot not yet used holds T{} already (the page made them all).
    if constexpr (sizeof...(Args) > 0) slot = T(std::forward<Args>(args)...);
    return slot;
  }
  void clear() {
    pages_.clear();
    size_ = retired_ = 0;
  }

  bool retired(size_t i) const {
    const Page* p = pages_[i >> kPageBits].get();
    return p == nullptr || p->gone[i & (kPage - 1)];
  }
  // Id i is no longer read: its value is reset, its page freed once all of it is retired.
  // Retiring an id twice does nothing.
  void Retire(size_t i) {
    assert(i < size_);
    std::unique_ptr<Page>& p = pages_[i >> kPageBits];
    if (p == nullptr || p->gone[i & (kPage - 1)]) return;
    T& slot = p->items[i & (kPage - 1)];
    std::destroy_at(&slot);
    std::construct_at(&slot);
    p->gone[i & (kPage - 1)] = true;
    ++retired_;
    if (++p->retired == kPage) p.reset();
  }

  template <class C, class V>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    Iter() = default;
    Iter(C* c, size_t i) : c_(c), i_(i) {}
    V& operator*() const { return (*c_)[i_]; }
    V* operator->() const { return &(*c_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    Iter operator++(int) {
      Iter old = *this;
      ++i_;
      return old;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    C* c_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iter<IdPages, T>;
  using const_iterator = Iter<const IdPages, const T>;
  // Every id in order. REQUIRES: none retired.
  iterator begin() {
    assert(retired_ == 0);
    return {this, 0};
  }
  iterator end() { return {this, size_}; }
  const_iterator begin() const {
    assert(retired_ == 0);
    return {this, 0};
  }
  const_iterator end() const { return {this, size_}; }

 private:
  struct Page {
    std::array<T, kPage> items{};
    std::array<bool, kPage> gone{};
    size_t retired = 0;
  };

  // The slot of id size(), which it now counts.
  T& Next() {
    if ((size_ & (kPage - 1)) == 0) pages_.push_back(std::make_unique<Page>());
    return pages_.back()->items[size_++ & (kPage - 1)];
  }
  T& Slot(size_t i) {
    assert(i < size_ && pages_[i >> kPageBits] != nullptr);
    return pages_[i >> kPageBits]->items[i & (kPage - 1)];
  }

  std::vector<std::unique_ptr<Page>> pages_;
  size_t size_ = 0;
  size_t retired_ = 0;
};

}  // namespace tessera
