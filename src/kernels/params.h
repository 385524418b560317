// Typed parameters of a kernel step: one struct per kernel family, defined once (in the
// family's `<family>_params.h` under kernels/) and used by both sides of the ABI — plan/
// lowering builds it, the kernel reads it. There is no second numbering of positional lists.
//
// A parameter struct is a plain aggregate with a family name and a field visitor:
//
//   struct TransposeParams {
//     static constexpr std::string_view kFamily = "transpose";
//     std::vector<int64_t> permutation;
//     template <typename Visit> void Fields(Visit&& visit) const { visit("permutation", permutation); }
//   };
//
// Fields may be integers, bools, enums, doubles, strings, vectors of integers, vectors of
// vectors of integers, or nested structs with their own Fields (printed in braces). The
// visitor gives every struct printing (plan dumps, error messages) and equality (so steps
// can be compared) without code per family.
//
// KernelParams holds one such struct, type-erased, immutable and shared (copying a
// KernelParams shares the struct). A kernel registration names the struct its kernel reads
// (KernelRegistry::Register<P>); the runtime checks every step's parameters against it
// when a plan is loaded, so a kernel reads its struct without checking (KernelArgs::Params).
//
// Thread-safety: KernelParams is immutable after construction; any number of threads may
// read one at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace stablert::kernels {

namespace params_detail {

template <typename T>
concept HasFields = requires(const T& t) { t.Fields([](std::string_view, const auto&) {}); };

template <typename T>
struct IsVector : std::false_type {};
template <typename T, typename A>
struct IsVector<std::vector<T, A>> : std::true_type {};

template <typename T>
void Print(std::string& out, const T& value);

template <typename P>
void PrintFields(std::string& out, const P& params) {
  bool first = true;
  params.Fields([&](std::string_view name, const auto& value) {
    if (!first) out += ' ';
    first = false;
    out.append(name);
    out += '=';
    Print(out, value);
  });
}

template <typename T>
void Print(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else if constexpr (std::is_enum_v<T>) {
    out += std::to_string(static_cast<int64_t>(value));
  } else if constexpr (std::is_arithmetic_v<T>) {
    out += std::to_string(value);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out += '"';
    out.append(std::string_view(value));
    out += '"';
  } else if constexpr (IsVector<T>::value) {
    out += '[';
    for (size_t i = 0; i < value.size(); ++i) {
      if (i) out += ',';
      Print(out, value[i]);
    }
    out += ']';
  } else {
    static_assert(HasFields<T>, "a parameter field must be a number, enum, string, vector or struct with Fields");
    out += '{';
    PrintFields(out, value);
    out += '}';
  }
}

template <typename T>
bool Equal(const T& a, const T& b);

template <typename P>
bool EqualFields(const P& a, const P& b) {
  // Visits a's fields, and b's in the same order; the n-th field of each pairs up.
  std::vector<const void*> b_fields;
  b.Fields([&](std::string_view, const auto& value) { b_fields.push_back(&value); });
  size_t index = 0;
  bool equal = true;
  a.Fields([&](std::string_view, const auto& value) {
    using Field = std::remove_cvref_t<decltype(value)>;
    equal = equal && Equal(value, *static_cast<const Field*>(b_fields[index]));
    ++index;
  });
  return equal;
}

template <typename T>
bool Equal(const T& a, const T& b) {
  if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string>) {
    return a == b;
  } else if constexpr (IsVector<T>::value) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!Equal(a[i], b[i])) return false;
    return true;
  } else {
    return EqualFields(a, b);
  }
}

}  // namespace params_detail

// A parameter struct (see above).
template <typename P>
concept ParamStruct = params_detail::HasFields<P> && requires {
  { P::kFamily } -> std::convertible_to<std::string_view>;
} && std::is_copy_constructible_v<P>;

// What is known about one parameter struct type: its family name, printing and equality.
// One instance per type (ParamsTypeOf); compared by address.
struct ParamsType {
  std::string_view family;
  std::string (*print)(const void* params);
  bool (*equal)(const void* a, const void* b);
};

template <ParamStruct P>
inline constexpr ParamsType kParamsTypeOf{
    P::kFamily,
    [](const void* p) {
      std::string out;
      params_detail::PrintFields(out, *static_cast<const P*>(p));
      return out;
    },
    [](const void* a, const void* b) {
      return params_detail::EqualFields(*static_cast<const P*>(a), *static_cast<const P*>(b));
    }};

// The ParamsType of P (a stable address).
template <ParamStruct P>
const ParamsType* ParamsTypeOf() {
  return &kParamsTypeOf<P>;
}

// One step's parameters: a parameter struct of some family, or none.
class KernelParams {
 public:
  KernelParams() = default;  // no parameters
  template <ParamStruct P>
  KernelParams(P params)  // NOLINT: a parameter struct converts implicitly
      : value_(std::make_shared<const P>(std::move(params))), type_(ParamsTypeOf<P>()) {}

  bool empty() const { return type_ == nullptr; }
  // The struct's type; nullptr when there are no parameters.
  const ParamsType* type() const { return type_; }
  std::string_view family() const { return type_ ? type_->family : std::string_view("none"); }

  // The struct if it is a P, else nullptr.
  template <ParamStruct P>
  const P* As() const {
    return type_ == ParamsTypeOf<P>() ? static_cast<const P*>(value_.get()) : nullptr;
  }
  // The struct, untyped (nullptr when there are no parameters).
  const void* get() const { return value_.get(); }

  // "name=value name=[1,2]" (empty when there are no parameters).
  std::string ToString() const { return type_ ? type_->print(value_.get()) : std::string(); }

  friend bool operator==(const KernelParams& a, const KernelParams& b) {
    if (a.type_ != b.type_) return false;
    return a.type_ == nullptr || a.value_ == b.value_ || a.type_->equal(a.value_.get(), b.value_.get());
  }

 private:
  std::shared_ptr<const void> value_;
  const ParamsType* type_ = nullptr;
};

}  // namespace stablert::kernels
