class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[32, 3, 3, 3]", primals_2: "f32[32]", primals_3: "f32[32]", primals_4: "f32[32]", primals_5: "f32[64, 32, 3, 3]", primals_6: "f32[64]", primals_7: "f32[64]", primals_8: "f32[64]", primals_9: "f32[10, 64]", primals_10: "f32[10]", primals_11: "f32[32]", primals_12: "f32[32]", primals_13: "i64[]", primals_14: "f32[64]", primals_15: "f32[64]", primals_16: "i64[]", primals_17: "f32[64, 3, 32, 32]"):
        convolution: "f32[64, 32, 32, 32]" = torch.ops.aten.convolution.default(primals_17, primals_1, primals_2, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        native_batch_norm = torch.ops.aten.native_batch_norm.default(convolution, primals_3, primals_4, primals_11, primals_12, True, 0.1, 1e-05)
        getitem: "f32[64, 32, 32, 32]" = native_batch_norm[0]
        getitem_1: "f32[32]" = native_batch_norm[1]
        getitem_2: "f32[32]" = native_batch_norm[2]
        relu: "f32[64, 32, 32, 32]" = torch.ops.aten.relu.default(getitem)
        max_pool2d_with_indices = torch.ops.aten.max_pool2d_with_indices.default(relu, [2, 2], [2, 2])
        getitem_3: "f32[64, 32, 16, 16]" = max_pool2d_with_indices[0]
        getitem_4: "i64[64, 32, 16, 16]" = max_pool2d_with_indices[1]
        convolution_1: "f32[64, 64, 16, 16]" = torch.ops.aten.convolution.default(getitem_3, primals_5, primals_6, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        native_batch_norm_1 = torch.ops.aten.native_batch_norm.default(convolution_1, primals_7, primals_8, primals_14, primals_15, True, 0.1, 1e-05)
        getitem_5: "f32[64, 64, 16, 16]" = native_batch_norm_1[0]
        getitem_6: "f32[64]" = native_batch_norm_1[1]
        getitem_7: "f32[64]" = native_batch_norm_1[2]
        relu_1: "f32[64, 64, 16, 16]" = torch.ops.aten.relu.default(getitem_5)
        mean: "f32[64, 64, 1, 1]" = torch.ops.aten.mean.dim(relu_1, [-1, -2], True)
        _reshape_alias: "f32[64, 64]" = torch.ops.aten._reshape_alias.default(mean, [64, 64], [64, 1])
        t: "f32[64, 10]" = torch.ops.aten.t.default(primals_9)
        addmm: "f32[64, 10]" = torch.ops.aten.addmm.default(primals_10, _reshape_alias, t)
        return [addmm, convolution, primals_7, getitem_1, relu, _reshape_alias, primals_5, getitem_3, t, primals_1, primals_14, primals_11, getitem_2, getitem_4, primals_15, relu_1, getitem_7, primals_12, primals_3, primals_17, convolution_1, getitem_6]
        
