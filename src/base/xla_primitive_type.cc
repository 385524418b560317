#include "base/xla_primitive_type.h"

#include <array>
#include <utility>

namespace stablert {
namespace {

constexpr std::array<std::pair<DType, int>, 32> kNumbers = {{
    {DType::kPred, 1},           {DType::kS8, 2},           {DType::kS16, 3},           {DType::kS32, 4},
    {DType::kS64, 5},            {DType::kU8, 6},           {DType::kU16, 7},           {DType::kU32, 8},
    {DType::kU64, 9},            {DType::kF16, 10},         {DType::kF32, 11},          {DType::kF64, 12},
    {DType::kC64, 15},           {DType::kBF16, 16},        {DType::kToken, 17},        {DType::kC128, 18},
    {DType::kF8E5M2, 19},        {DType::kF8E4M3FN, 20},    {DType::kS4, 21},           {DType::kU4, 22},
    {DType::kF8E4M3B11FNUZ, 23}, {DType::kF8E5M2FNUZ, 24},  {DType::kF8E4M3FNUZ, 25},   {DType::kS2, 26},
    {DType::kU2, 27},            {DType::kF8E4M3, 28},      {DType::kF8E3M4, 29},       {DType::kS1, 30},
    {DType::kU1, 31},            {DType::kF4E2M1FN, 32},    {DType::kF8E8M0FNU, 33},    {DType::kInvalid, 0},
}};

}  // namespace

std::optional<int> XlaPrimitiveType(DType dtype) {
  if (dtype == DType::kInvalid) return std::nullopt;
  for (const auto& [d, number] : kNumbers)
    if (d == dtype) return number;
  return std::nullopt;
}

std::optional<DType> DTypeOfXlaPrimitiveType(int primitive_type) {
  if (primitive_type <= 0) return std::nullopt;
  for (const auto& [d, number] : kNumbers)
    if (number == primitive_type) return d;
  return std::nullopt;
}

}  // namespace stablert
