// Registration functions of the kernel families, one per source file. Internal to
// kernels/; RegisterCpuKernels (registry.cc) calls them all.
#pragma once

#include "base/status.h"
#include "kernels/kernel.h"

namespace stablert::kernels {

class KernelRegistry;

Status RegisterUnaryKernels(KernelRegistry& registry);
Status RegisterBinaryKernels(KernelRegistry& registry);
Status RegisterCompareSelectKernels(KernelRegistry& registry);
Status RegisterConvertKernels(KernelRegistry& registry);
Status RegisterDataMovementKernels(KernelRegistry& registry);
Status RegisterSlicingKernels(KernelRegistry& registry);
Status RegisterReduceKernels(KernelRegistry& registry);
Status RegisterDotKernels(KernelRegistry& registry);
Status RegisterProgramKernels(KernelRegistry& registry);
// "argminmax.<V>.<I>" (argminmax.cc).
Status RegisterArgMinMaxKernels(KernelRegistry& registry);
Status RegisterWindowKernels(KernelRegistry& registry);
Status RegisterGatherScatterKernels(KernelRegistry& registry);
Status RegisterConvolutionKernels(KernelRegistry& registry);
// "convolution_dnnl.f32" (convolution_dnnl.cc); `loop_kernel_f32` runs what oneDNN cannot.
Status RegisterDnnlConvolutionKernels(KernelRegistry& registry, KernelFn loop_kernel_f32);
Status RegisterReducePrecisionKernels(KernelRegistry& registry);
Status RegisterComplexKernels(KernelRegistry& registry);
Status RegisterLinalgKernels(KernelRegistry& registry);
Status RegisterLinalgCustomCallKernels(KernelRegistry& registry);
Status RegisterRngKernels(KernelRegistry& registry);
Status RegisterBitcastKernels(KernelRegistry& registry);
Status RegisterFftKernels(KernelRegistry& registry);
Status RegisterSortKernels(KernelRegistry& registry);
Status RegisterFusedKernels(KernelRegistry& registry);

}  // namespace stablert::kernels
