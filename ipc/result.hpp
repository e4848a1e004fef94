// A small value-or-error type for the trust boundary.
// std::expected is not usable here: libstdc++ 12's <expected> does not build
// under clang 14, which the fuzz build uses.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hb {

// An error as a value: a short human sentence. Errors that must be
// machine-readable across the IPC boundary use ReasonCode instead.
struct Error {
    std::string message;
};

template <typename T>
class Result {
  public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT
    Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

    [[nodiscard]] bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(v_);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(v_);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(v_));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    [[nodiscard]] const Error& error() const {
        assert(!ok());
        return std::get<1>(v_);
    }

  private:
    std::variant<T, Error> v_;
};

// Result<void>: success carries nothing.
template <>
class Result<void> {
  public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

    [[nodiscard]] bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    [[nodiscard]] const Error& error() const {
        assert(!ok_);
        return error_;
    }

  private:
    Error error_;
    bool ok_ = true;
};

inline Error make_error(std::string message) {
    return Error{std::move(message)};
}

}  // namespace hb
