// SmallArray: a message array that nearly always holds one element. A consumer's fetch names one partition of one
// topic, and so do a producer's requests and the answers to both: with its first element inline, such an array is
// built, encoded and decoded without allocating. Beyond one element it grows on the heap like a vector. Boost's
// small_vector is the one third-party container of the core (ci/check-seam.sh allows it in this file only).
#pragma once

#include <boost/container/small_vector.hpp>
#include <utility>

namespace sluice::protocol {

template <typename T>
class SmallArray : public boost::container::small_vector<T, 1> {
  using Base = boost::container::small_vector<T, 1>;

 public:
  using Base::Base;
  SmallArray() = default;
  SmallArray(const SmallArray&) = default;
  SmallArray& operator=(const SmallArray&) = default;
  // Boost declares these noexcept only for types its own traits recognise; message structs (strings, vectors and
  // more SmallArrays) move without throwing, and without the promise a std::vector of them copies when it grows.
  SmallArray(SmallArray&& other) noexcept : Base(std::move(static_cast<Base&>(other))) {}
  SmallArray& operator=(SmallArray&& other) noexcept {
    Base::operator=(std::move(static_cast<Base&>(other)));
    return *this;
  }
  ~SmallArray() = default;
};

}  // namespace sluice::protocol
