module @jit_g {
  func.func public @main(%arg0: tensor<4x4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<[1.000000e+00, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %h = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
    %b = stablehlo.constant dense<[true, false]> : tensor<2xi1>
    %z = stablehlo.constant dense<(1.0,2.0)> : tensor<complex<f32>>
    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
    %2:2 = stablehlo.while(%iterArg = %c, %iterArg_1 = %1) : tensor<i32>, tensor<4xf32>
    cond {
      %c_2 = stablehlo.constant dense<3> : tensor<i32>
      %4 = stablehlo.compare  LT, %iterArg, %c_2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %4 = stablehlo.multiply %iterArg_1, %cst : tensor<4xf32>
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg, %c_2 : tensor<i32>
      stablehlo.return %5, %4 : tensor<i32>, tensor<4xf32>
    }
    %3 = stablehlo.slice %arg0 [0:4, 1:2] : (tensor<4x4xf32>) -> tensor<4x1xf32>
    return %2#1 : tensor<4xf32>
  }
}
