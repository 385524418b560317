module {
  func.func @main(%x: tensor<4x3xf32>, %r: tensor<3xf32>, %h: tensor<4x3xbf16>) -> (tensor<4x2xf32>, tensor<4x2xi32>, tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xbf16>, tensor<4x3xf32>) {
    %v, %i = chlo.top_k(%x, k = 2) : tensor<4x3xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
    %0 = chlo.broadcast_add %x, %r {broadcast_dimensions = array<i64: 1>} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %1 = chlo.broadcast_compare %x, %r {comparison_direction = #chlo<comparison_direction LT>} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
    %2 = chlo.lgamma %h : tensor<4x3xbf16> -> tensor<4x3xbf16>
    %3 = chlo.erf_inv %0 : tensor<4x3xf32> -> tensor<4x3xf32>
    %4 = chlo.next_after %3, %x : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
    %5 = "chlo.zeta"(%4, %x) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %6 = "chlo.constant_like"(%x) {value = 1.0 : f32} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %7 = chlo.polygamma %6, %5 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
    return %v, %i, %7, %1, %2, %0 : tensor<4x2xf32>, tensor<4x2xi32>, tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xbf16>, tensor<4x3xf32>
  }
}
