#include "kernels/ffi_params.h"

#include <gtest/gtest.h>

namespace stablert::kernels {
namespace {

FfiAttribute Scalar(DType dtype, std::string bytes) {
  FfiAttribute a;
  a.kind = FfiAttribute::Kind::kScalar;
  a.dtype = dtype;
  a.bytes = std::move(bytes);
  return a;
}

FfiAttribute String(std::string text) {
  FfiAttribute a;
  a.kind = FfiAttribute::Kind::kString;
  a.bytes = std::move(text);
  return a;
}

TEST(FfiParamsTest, AttributesRoundTripSortedByNameAtEveryLevel) {
  FfiAttribute inner;
  inner.kind = FfiAttribute::Kind::kDictionary;
  inner.names = {"z", "a"};
  inner.fields = {String("last"), Scalar(DType::kS8, std::string(1, '\x05'))};
  FfiAttribute array;
  array.kind = FfiAttribute::Kind::kArray;
  array.dtype = DType::kS32;
  array.bytes = std::string("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  FfiAttributes attributes;
  attributes.names = {"nested", "ints", "b"};
  attributes.values = {inner, array, String("")};

  const std::string encoded = EncodeFfiAttributes(attributes);
  for (char c : encoded) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  StatusOr<FfiAttributes> decoded = DecodeFfiAttributes(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->names, (std::vector<std::string>{"b", "ints", "nested"}));
  EXPECT_EQ(decoded->values[0].kind, FfiAttribute::Kind::kString);
  EXPECT_EQ(decoded->values[1].kind, FfiAttribute::Kind::kArray);
  EXPECT_EQ(decoded->values[1].dtype, DType::kS32);
  EXPECT_EQ(decoded->values[1].bytes, array.bytes);
  const FfiAttribute& nested = decoded->values[2];
  ASSERT_EQ(nested.kind, FfiAttribute::Kind::kDictionary);
  EXPECT_EQ(nested.names, (std::vector<std::string>{"a", "z"}));
  EXPECT_EQ(nested.fields[0].bytes, std::string(1, '\x05'));
  EXPECT_EQ(nested.fields[1].bytes, "last");
}

TEST(FfiParamsTest, MalformedEncodingIsInvalidArgument) {
  for (std::string_view bad : {"0", "zz", "01000000", "0100000001000000"}) {
    StatusOr<FfiAttributes> decoded = DecodeFfiAttributes(bad);
    EXPECT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(DecodeFfiAttributes(EncodeFfiAttributes({})).ok());
}

}  // namespace
}  // namespace stablert::kernels
