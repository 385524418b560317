// sin and cos of one f32 value on the host's ISA (dispatch.h), for code that computes one
// element at a time (register programs, kernels/scalar_program.h): the bits the vector
// kernels (unary_simd.h, UnaryFn::kSin / kCos) give that element in an array of any length,
// without their per-call work (the vector-or-scalar decision per lane, buffers, the switch
// over functions). The value is passed and returned in a machine register.
//
// Pure functions; any thread. Which target runs is read at each call, so STABLERT_ISA caps
// apply as to the kernels.
#pragma once

namespace stablert::kernels::simd {

float SinOneF32(float x);
float CosOneF32(float x);

}  // namespace stablert::kernels::simd
