#include "stablehlo/vhlo_ops.h"

#include <algorithm>
#include <array>

namespace stablert::stablehlo {
namespace {

using ir::OpCode;

constexpr std::string_view kAllGather =
    "all_gather_dim,channel_id,replica_groups,use_global_device_ids";
constexpr std::string_view kAllReduce = "channel_id,replica_groups,use_global_device_ids";
constexpr std::string_view kAllToAll =
    "channel_id,concat_dimension,replica_groups,split_count,split_dimension";
constexpr std::string_view kConv =
    "batch_group_count,feature_group_count,input_batch_dimension,input_feature_dimension,"
    "input_spatial_dimensions,kernel_input_feature_dimension,kernel_output_feature_dimension,"
    "kernel_spatial_dimensions,lhs_dilation,output_batch_dimension,output_feature_dimension,"
    "output_spatial_dimensions,padding,precision_config,rhs_dilation,window_reversal,"
    "window_strides";
constexpr std::string_view kDynamicConvV2 =
    "batch_group_count,feature_group_count,input_batch_dimension,input_feature_dimension,"
    "input_spatial_dimensions,kernel_input_feature_dimension,kernel_output_feature_dimension,"
    "kernel_spatial_dimensions,lhs_dilation,output_batch_dimension,output_feature_dimension,"
    "output_spatial_dimensions,precision_config,rhs_dilation,window_reversal,window_strides";
constexpr std::string_view kCustomCallV1 =
    "api_version,backend_config,call_target_name,called_computations,has_side_effect,"
    "operand_layouts,output_operand_aliases,result_layouts";
constexpr std::string_view kCustomCallV2 =
    "api_version,backend_config,call_target_name,called_computations,has_side_effect,"
    "operand_layouts,output_operand_aliases,result_layouts,result_tilings";
constexpr std::string_view kDotGeneralV1 =
    "lhs_batching_dimensions,lhs_contracting_dimensions,precision_config,"
    "rhs_batching_dimensions,rhs_contracting_dimensions";
constexpr std::string_view kDotGeneralV2 =
    "accumulation_type,allow_imprecise_accumulation,lhs_batching_dimensions,"
    "lhs_component_count,lhs_contracting_dimensions,lhs_precision_type,"
    "num_primitive_operations,precision_config,rhs_batching_dimensions,rhs_component_count,"
    "rhs_contracting_dimensions,rhs_precision_type";
constexpr std::string_view kGatherV1 =
    "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,slice_sizes,"
    "start_index_map";
constexpr std::string_view kGatherV2 =
    "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,"
    "operand_batching_dims,slice_sizes,start_index_map,start_indices_batching_dims";
constexpr std::string_view kDynamicGatherV1 =
    "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,start_index_map";
constexpr std::string_view kDynamicGatherV2 =
    "collapsed_slice_dims,index_vector_dim,indices_are_sorted,offset_dims,"
    "operand_batching_dims,start_index_map,start_indices_batching_dims";
constexpr std::string_view kScatterV1 =
    "index_vector_dim,indices_are_sorted,inserted_window_dims,scatter_dims_to_operand_dims,"
    "unique_indices,update_window_dims";
constexpr std::string_view kScatterV2 =
    "index_vector_dim,indices_are_sorted,input_batching_dims,inserted_window_dims,"
    "scatter_dims_to_operand_dims,scatter_indices_batching_dims,unique_indices,"
    "update_window_dims";
constexpr std::string_view kWindow =
    "base_dilations,padding,window_dilations,window_dimensions,window_strides";

// Sorted by name for binary search (checked at first use).
constexpr VhloOpInfo kVhloOps[] = {
    {"abs_v1", OpCode::kAbs, ""},
    {"add_v1", OpCode::kAdd, ""},
    {"after_all_v1", OpCode::kAfterAll, ""},
    {"all_gather_v1", OpCode::kAllGather, kAllGather},
    {"all_gather_v2", OpCode::kAllGather, kAllGather},
    {"all_reduce_v1", OpCode::kAllReduce, kAllReduce},
    {"all_reduce_v2", OpCode::kAllReduce, kAllReduce},
    {"all_to_all_v1", OpCode::kAllToAll, kAllToAll},
    {"all_to_all_v2", OpCode::kAllToAll, kAllToAll},
    {"and_v1", OpCode::kAnd, ""},
    {"async_done_v1", OpCode::kAsyncDone, ""},
    {"async_start_v1", OpCode::kAsyncStart, ""},
    {"atan2_v1", OpCode::kAtan2, ""},
    {"batch_norm_grad_v1", OpCode::kBatchNormGrad, "epsilon,feature_index"},
    {"batch_norm_inference_v1", OpCode::kBatchNormInference, "epsilon,feature_index"},
    {"batch_norm_training_v1", OpCode::kBatchNormTraining, "epsilon,feature_index"},
    {"bitcast_convert_v1", OpCode::kBitcastConvert, ""},
    {"broadcast_in_dim_v1", OpCode::kBroadcastInDim, "broadcast_dimensions"},
    {"broadcast_v1", OpCode::kBroadcast, "broadcast_sizes"},
    {"call_v1", OpCode::kCall, "callee"},
    {"case_v1", OpCode::kCase, ""},
    {"cbrt_v1", OpCode::kCbrt, ""},
    {"cbrt_v2", OpCode::kCbrt, "result_accuracy"},
    {"ceil_v1", OpCode::kCeil, ""},
    {"cholesky_v1", OpCode::kCholesky, "lower"},
    {"clamp_v1", OpCode::kClamp, ""},
    {"collective_broadcast_v1", OpCode::kCollectiveBroadcast, "channel_id,replica_groups"},
    {"collective_broadcast_v2", OpCode::kCollectiveBroadcast,
     "channel_id,has_dynamic_root,replica_groups"},
    {"collective_permute_v1", OpCode::kCollectivePermute, "channel_id,source_target_pairs"},
    {"collective_reduce_v1", OpCode::kCollectiveReduce,
     "channel_id,has_dynamic_root,replica_groups,use_global_device_ids"},
    {"compare_v1", OpCode::kCompare, "compare_type,comparison_direction"},
    {"complex_v1", OpCode::kComplex, ""},
    {"composite_v1", OpCode::kComposite, "composite_attributes,decomposition,name,version"},
    {"composite_v2", OpCode::kComposite, "composite_attributes,decomposition,name,version"},
    {"concatenate_v1", OpCode::kConcatenate, "dimension"},
    {"constant_v1", OpCode::kConstant, "value"},
    {"convert_v1", OpCode::kConvert, ""},
    {"convolution_v1", OpCode::kConvolution, kConv},
    {"cosine_v1", OpCode::kCosine, ""},
    {"cosine_v2", OpCode::kCosine, "result_accuracy"},
    {"count_leading_zeros_v1", OpCode::kCountLeadingZeros, ""},
    {"create_token_v1", OpCode::kCreateToken, ""},
    {"cross-replica-sum_v1", OpCode::kCrossReplicaSum, "replica_groups"},
    {"custom_call_v1", OpCode::kCustomCall, kCustomCallV1},
    {"custom_call_v2", OpCode::kCustomCall, kCustomCallV2},
    {"divide_v1", OpCode::kDivide, ""},
    {"dot_general_v1", OpCode::kDotGeneral, kDotGeneralV1},
    {"dot_general_v2", OpCode::kDotGeneral, kDotGeneralV2},
    {"dot_v1", OpCode::kDot, "precision_config"},
    {"dynamic_broadcast_in_dim_v1", OpCode::kDynamicBroadcastInDim,
     "broadcast_dimensions,known_expanding_dimensions,known_nonexpanding_dimensions"},
    {"dynamic_conv_v1", OpCode::kDynamicConv, kConv},
    {"dynamic_conv_v2", OpCode::kDynamicConv, kDynamicConvV2},
    {"dynamic_gather_v1", OpCode::kDynamicGather, kDynamicGatherV1},
    {"dynamic_gather_v2", OpCode::kDynamicGather, kDynamicGatherV2},
    {"dynamic_iota_v1", OpCode::kDynamicIota, "iota_dimension"},
    {"dynamic_pad_v1", OpCode::kDynamicPad, ""},
    {"dynamic_reshape_v1", OpCode::kDynamicReshape, ""},
    {"dynamic_slice_v1", OpCode::kDynamicSlice, "slice_sizes"},
    {"dynamic_update_slice_v1", OpCode::kDynamicUpdateSlice, ""},
    {"einsum_v1", OpCode::kEinsum, "einsum_config"},
    {"exponential_minus_one_v1", OpCode::kExponentialMinusOne, ""},
    {"exponential_minus_one_v2", OpCode::kExponentialMinusOne, "result_accuracy"},
    {"exponential_v1", OpCode::kExponential, ""},
    {"exponential_v2", OpCode::kExponential, "result_accuracy"},
    {"fft_v1", OpCode::kFft, "fft_length,fft_type"},
    {"floor_v1", OpCode::kFloor, ""},
    {"func_v1", OpCode::kCall, "arg_attrs,function_type,res_attrs,sym_name,sym_visibility"},
    {"gather_v1", OpCode::kGather, kGatherV1},
    {"gather_v2", OpCode::kGather, kGatherV2},
    {"get_dimension_size_v1", OpCode::kGetDimensionSize, "dimension"},
    {"get_tuple_element_v1", OpCode::kGetTupleElement, "index"},
    {"if_v1", OpCode::kIf, ""},
    {"imag_v1", OpCode::kImag, ""},
    {"infeed_v1", OpCode::kInfeed, "infeed_config,layout"},
    {"iota_v1", OpCode::kIota, "iota_dimension"},
    {"is_finite_v1", OpCode::kIsFinite, ""},
    {"log_plus_one_v1", OpCode::kLogPlusOne, ""},
    {"log_plus_one_v2", OpCode::kLogPlusOne, "result_accuracy"},
    {"log_v1", OpCode::kLog, ""},
    {"log_v2", OpCode::kLog, "result_accuracy"},
    {"logistic_v1", OpCode::kLogistic, ""},
    {"logistic_v2", OpCode::kLogistic, "result_accuracy"},
    {"map_v1", OpCode::kMap, "dimensions"},
    {"maximum_v1", OpCode::kMaximum, ""},
    {"minimum_v1", OpCode::kMinimum, ""},
    {"multiply_v1", OpCode::kMultiply, ""},
    {"negate_v1", OpCode::kNegate, ""},
    {"not_v1", OpCode::kNot, ""},
    {"optimization_barrier_v1", OpCode::kOptimizationBarrier, ""},
    {"or_v1", OpCode::kOr, ""},
    {"outfeed_v1", OpCode::kOutfeed, "outfeed_config"},
    {"pad_v1", OpCode::kPad, "edge_padding_high,edge_padding_low,interior_padding"},
    {"partition_id_v1", OpCode::kPartitionId, ""},
    {"popcnt_v1", OpCode::kPopcnt, ""},
    {"power_v1", OpCode::kPower, ""},
    {"real_dynamic_slice_v1", OpCode::kRealDynamicSlice, ""},
    {"real_v1", OpCode::kReal, ""},
    {"recv_v1", OpCode::kRecv, "channel_id,channel_type,is_host_transfer"},
    {"recv_v2", OpCode::kRecv, "channel_id,channel_type,is_host_transfer,source_target_pairs"},
    {"reduce_precision_v1", OpCode::kReducePrecision, "exponent_bits,mantissa_bits"},
    {"reduce_scatter_v1", OpCode::kReduceScatter,
     "channel_id,replica_groups,scatter_dimension,use_global_device_ids"},
    {"reduce_v1", OpCode::kReduce, "dimensions"},
    {"reduce_window_v1", OpCode::kReduceWindow, kWindow},
    {"remainder_v1", OpCode::kRemainder, ""},
    {"replica_id_v1", OpCode::kReplicaId, ""},
    {"reshape_v1", OpCode::kReshape, ""},
    {"return_v1", OpCode::kReturn, ""},
    {"reverse_v1", OpCode::kReverse, "dimensions"},
    {"rng_bit_generator_v1", OpCode::kRngBitGenerator, "rng_algorithm"},
    {"rng_v1", OpCode::kRng, "rng_distribution"},
    {"round_nearest_afz_v1", OpCode::kRoundNearestAfz, ""},
    {"round_nearest_even_v1", OpCode::kRoundNearestEven, ""},
    {"rsqrt_v1", OpCode::kRsqrt, ""},
    {"rsqrt_v2", OpCode::kRsqrt, "result_accuracy"},
    {"scatter_v1", OpCode::kScatter, kScatterV1},
    {"scatter_v2", OpCode::kScatter, kScatterV2},
    {"select_and_scatter_v1", OpCode::kSelectAndScatter,
     "padding,window_dimensions,window_strides"},
    {"select_v1", OpCode::kSelect, ""},
    {"send_v1", OpCode::kSend, "channel_id,channel_type,is_host_transfer"},
    {"send_v2", OpCode::kSend, "channel_id,channel_type,is_host_transfer,source_target_pairs"},
    {"set_dimension_size_v1", OpCode::kSetDimensionSize, "dimension"},
    {"shift_left_v1", OpCode::kShiftLeft, ""},
    {"shift_right_arithmetic_v1", OpCode::kShiftRightArithmetic, ""},
    {"shift_right_logical_v1", OpCode::kShiftRightLogical, ""},
    {"sign_v1", OpCode::kSign, ""},
    {"sine_v1", OpCode::kSine, ""},
    {"sine_v2", OpCode::kSine, "result_accuracy"},
    {"slice_v1", OpCode::kSlice, "limit_indices,start_indices,strides"},
    {"sort_v1", OpCode::kSort, "dimension,is_stable"},
    {"sqrt_v1", OpCode::kSqrt, ""},
    {"sqrt_v2", OpCode::kSqrt, "result_accuracy"},
    {"subtract_v1", OpCode::kSubtract, ""},
    {"tan_v1", OpCode::kTan, ""},
    {"tan_v2", OpCode::kTan, "result_accuracy"},
    {"tanh_v1", OpCode::kTanh, ""},
    {"tanh_v2", OpCode::kTanh, "result_accuracy"},
    {"torch_index_select_v1", OpCode::kTorchIndexSelect, "batch_dims,dim"},
    {"transpose_v1", OpCode::kTranspose, "permutation"},
    {"triangular_solve_v1", OpCode::kTriangularSolve,
     "left_side,lower,transpose_a,unit_diagonal"},
    {"tuple_v1", OpCode::kTuple, ""},
    {"unary_einsum_v1", OpCode::kUnaryEinsum, "einsum_config"},
    {"uniform_dequantize_v1", OpCode::kUniformDequantize, ""},
    {"uniform_quantize_v1", OpCode::kUniformQuantize, ""},
    {"while_v1", OpCode::kWhile, ""},
    {"xor_v1", OpCode::kXor, ""},
};

constexpr SdyOpInfo kSdyOps[] = {
    {"manual_computation", OpCode::kSdyManualComputation, "in_shardings,manual_axes,out_shardings"},
    {"propagation_barrier", OpCode::kSdyPropagationBarrier, "allowed_direction"},
    {"reshard", OpCode::kSdyReshard, "sharding"},
    {"return", OpCode::kSdyReturn, ""},
    {"sharding_constraint", OpCode::kSdyShardingConstraint, "sharding"},
    {"sharding_group", OpCode::kSdyShardingGroup, "group_id"},
};

template <typename T, size_t N>
const T* Find(const T (&table)[N], std::string_view name) {
  const T* it = std::lower_bound(std::begin(table), std::end(table), name,
                                 [](const T& row, std::string_view key) { return row.name < key; });
  if (it == std::end(table) || it->name != name) return nullptr;
  return it;
}

template <typename T, size_t N>
constexpr bool IsSorted(const T (&table)[N]) {
  for (size_t i = 1; i < N; ++i)
    if (!(table[i - 1].name < table[i].name)) return false;
  return true;
}
static_assert(IsSorted(kVhloOps), "kVhloOps must be sorted by name");
static_assert(IsSorted(kSdyOps), "kSdyOps must be sorted by name");

}  // namespace

const VhloOpInfo* FindVhloOp(std::string_view name) { return Find(kVhloOps, name); }
const SdyOpInfo* FindSdyOp(std::string_view name) { return Find(kSdyOps, name); }

}  // namespace stablert::stablehlo
