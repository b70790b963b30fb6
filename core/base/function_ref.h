// A non-owning reference to a callable, for a callback used only during the call that receives it (C++26's
// std::function_ref): unlike std::function it never allocates (a std::function made of a lambda that captures
// more than two pointers allocates each time one is made) and calls through one plain function pointer.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace sluice {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  // The callable must outlive every call through this reference: pass it straight to the function that calls it.
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): a callback parameter takes lambdas as they are
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return std::invoke(*static_cast<std::remove_reference_t<F>*>(object), std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace sluice
