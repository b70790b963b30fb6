// Result<T>: a value or an error Status. In-house because std::expected needs C++23.
#pragma once

#include <utility>
#include <variant>

#include "core/base/assert.h"
#include "core/base/status.h"

namespace sluice {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::in_place_index<1>, std::move(status)) {  // NOLINT
    SLUICE_ASSERT(!std::get<1>(state_).ok());
  }

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(state_);
  }

  T& value() & {
    SLUICE_ASSERT(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    SLUICE_ASSERT(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    SLUICE_ASSERT(ok());
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  Status take_status() && { return ok() ? Status() : std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace sluice

#define SLUICE_CONCAT_INNER_(a, b) a##b
#define SLUICE_CONCAT_(a, b) SLUICE_CONCAT_INNER_(a, b)

// SLUICE_ASSIGN_OR_RETURN(auto file, fs.open(path, mode)); returns the error Status from the enclosing function.
#define SLUICE_ASSIGN_OR_RETURN(lhs, expr)                                               \
  auto SLUICE_CONCAT_(sluice_result_, __LINE__) = (expr);                                \
  if (!SLUICE_CONCAT_(sluice_result_, __LINE__).ok())                                    \
    return std::move(SLUICE_CONCAT_(sluice_result_, __LINE__)).take_status();            \
  lhs = std::move(SLUICE_CONCAT_(sluice_result_, __LINE__)).value()
