#pragma once
// A callable passed down a call and never kept: a pointer to it and a function that calls it, so
// handing a capturing lambda to NCCL's hot path allocates nothing (std::function may, for a lambda
// with more than a pointer or two of captures). Empty (null) when made from nullptr.
#include <type_traits>
#include <utility>

namespace ncclbot::plugin {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  FunctionRef(std::nullptr_t = nullptr) {}  // NOLINT: implicit, as std::function's
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit, so a lambda is passed as it is
      : object_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}

  explicit operator bool() const { return call_ != nullptr; }
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace ncclbot::plugin
