// EventAction: what a simulated event runs, a move-only void() callable kept inside the event's slot when it fits
// kInlineBytes (a std::function keeps only 16 bytes in place: a network chunk's delivery, which holds a guard, its
// connection, side and sequence, allocated once per chunk, 320 thousand times in the benchmark's run). Larger
// callables go to the heap.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "core/base/assert.h"

namespace sluice {

class EventAction {
 public:
  static constexpr size_t kInlineBytes = 64;

  EventAction() = default;
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, EventAction> && std::is_invocable_r_v<void, std::decay_t<F>&>)
  EventAction(F&& f) {  // NOLINT(google-explicit-constructor): schedule_at takes lambdas as they are
    construct(std::forward<F>(f));
  }
  EventAction(EventAction&& other) noexcept { take(other); }
  EventAction& operator=(EventAction&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  EventAction(const EventAction&) = delete;
  EventAction& operator=(const EventAction&) = delete;
  ~EventAction() { reset(); }

  // Builds `f` in place, as the constructor does: SimWorld::schedule_at builds the callable in its event's slot, where
  // moving an EventAction in would cost one more relocation per event. REQUIRES: holds no callable.
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, EventAction> && std::is_invocable_r_v<void, std::decay_t<F>&>)
  void emplace(F&& f) {
    SLUICE_ASSERT(ops_ == nullptr);
    construct(std::forward<F>(f));
  }

  explicit operator bool() const { return ops_ != nullptr; }
  // REQUIRES: holds a callable.
  void operator()() {
    SLUICE_ASSERT(ops_ != nullptr);
    ops_->invoke(storage_);
  }
  // Empties this action, then runs the callable it held and destroys it: one indirect call where moving it out,
  // calling it and destroying it took three. The callable may reuse or free this action's storage while it runs (an
  // event's slot goes to the events it schedules). REQUIRES: holds a callable.
  void run_once() {
    SLUICE_ASSERT(ops_ != nullptr);
    std::exchange(ops_, nullptr)->run_once(storage_);
  }
  void reset() {
    if (ops_ == nullptr) return;
    ops_->destroy(storage_);
    ops_ = nullptr;
  }

 private:
  struct Ops {
    void (*invoke)(void* storage);
    void (*relocate)(void* from, void* to);  // moves the callable to `to` and destroys it at `from`
    void (*destroy)(void* storage);
    void (*run_once)(void* storage);  // moves the callable out of `storage`, then calls and destroys it
  };

  template <typename C>
  static constexpr bool fits_inline() {
    return sizeof(C) <= kInlineBytes && alignof(C) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<C>;
  }

  template <typename C>
  static constexpr Ops kInlineOps{
      [](void* s) { (*std::launder(static_cast<C*>(s)))(); },
      [](void* from, void* to) {
        C* source = std::launder(static_cast<C*>(from));
        ::new (to) C(std::move(*source));
        source->~C();
      },
      [](void* s) { std::launder(static_cast<C*>(s))->~C(); },
      [](void* s) {
        C* source = std::launder(static_cast<C*>(s));
        C callable(std::move(*source));
        source->~C();
        callable();
      },
  };
  template <typename C>
  static constexpr Ops kHeapOps{
      [](void* s) { (**std::launder(static_cast<C**>(s)))(); },
      [](void* from, void* to) { ::new (to) C*(*std::launder(static_cast<C**>(from))); },
      [](void* s) { delete *std::launder(static_cast<C**>(s)); },
      [](void* s) {
        const std::unique_ptr<C> callable(*std::launder(static_cast<C**>(s)));
        (*callable)();
      },
  };

  template <typename F>
  void construct(F&& f) {
    using Callable = std::decay_t<F>;
    if constexpr (fits_inline<Callable>()) {
      ::new (static_cast<void*>(storage_)) Callable(std::forward<F>(f));
      ops_ = &kInlineOps<Callable>;
    } else {
      ::new (static_cast<void*>(storage_)) Callable*(new Callable(std::forward<F>(f)));
      ops_ = &kHeapOps<Callable>;
    }
  }

  void take(EventAction& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->relocate(other.storage_, storage_);
    ops_ = std::exchange(other.ops_, nullptr);
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace sluice
