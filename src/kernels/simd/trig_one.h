// sin and cos of one f32 value on the host's ISA (dispatch.h), for code that computes one
// element at a time (register programs, kernels/scalar_program.h): the bits the vector
// kernels (unary_simd.h, UnaryFn::kSin / kCos) give that element in an array of any length,
// without their per-call work (the vector-or-scalar decision per lane, buffers, the switch
// over functions). The value is passed and returned in a machine register.
//
// Pure functions; any thread. SinOneF32/CosOneF32 read which target to run at each call, so
// STABLERT_ISA caps apply as to the kernels; the *Function forms return the function of the
// target chosen at the time they are called (one indirect call less per use), for code
// resolved after the cap is set (loaded plans).
#pragma once

namespace stablert::kernels::simd {

float SinOneF32(float x);
float CosOneF32(float x);

using OneF32Fn = float (*)(float);
OneF32Fn SinOneF32Function();
OneF32Fn CosOneF32Function();

}  // namespace stablert::kernels::simd
