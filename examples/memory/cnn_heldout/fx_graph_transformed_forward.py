class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[24, 3, 5, 5]", primals_2: "f32[24]", primals_3: "f32[24]", primals_4: "f32[24]", primals_5: "f32[48, 24, 3, 3]", primals_6: "f32[48]", primals_7: "f32[48]", primals_8: "f32[48]", primals_9: "f32[96, 48, 3, 3]", primals_10: "f32[96]", primals_11: "f32[96]", primals_12: "f32[96]", primals_13: "f32[100, 96]", primals_14: "f32[100]", primals_15: "f32[10, 100]", primals_16: "f32[10]", primals_17: "f32[24]", primals_18: "f32[24]", primals_19: "i64[]", primals_20: "f32[48]", primals_21: "f32[48]", primals_22: "i64[]", primals_23: "f32[96]", primals_24: "f32[96]", primals_25: "i64[]", primals_26: "f32[48, 3, 40, 40]"):
        convolution: "f32[48, 24, 40, 40]" = torch.ops.aten.convolution.default(primals_26, primals_1, primals_2, [1, 1], [2, 2], [1, 1], False, [0, 0], 1)
        native_batch_norm = torch.ops.aten.native_batch_norm.default(convolution, primals_3, primals_4, primals_17, primals_18, True, 0.1, 1e-05)
        getitem: "f32[48, 24, 40, 40]" = native_batch_norm[0]
        getitem_1: "f32[24]" = native_batch_norm[1]
        getitem_2: "f32[24]" = native_batch_norm[2]
        relu: "f32[48, 24, 40, 40]" = torch.ops.aten.relu.default(getitem)
        convolution_1: "f32[48, 48, 20, 20]" = torch.ops.aten.convolution.default(relu, primals_5, primals_6, [2, 2], [1, 1], [1, 1], False, [0, 0], 1)
        native_batch_norm_1 = torch.ops.aten.native_batch_norm.default(convolution_1, primals_7, primals_8, primals_20, primals_21, True, 0.1, 1e-05)
        getitem_3: "f32[48, 48, 20, 20]" = native_batch_norm_1[0]
        getitem_4: "f32[48]" = native_batch_norm_1[1]
        getitem_5: "f32[48]" = native_batch_norm_1[2]
        relu_1: "f32[48, 48, 20, 20]" = torch.ops.aten.relu.default(getitem_3)
        max_pool2d_with_indices = torch.ops.aten.max_pool2d_with_indices.default(relu_1, [2, 2], [2, 2])
        getitem_6: "f32[48, 48, 10, 10]" = max_pool2d_with_indices[0]
        getitem_7: "i64[48, 48, 10, 10]" = max_pool2d_with_indices[1]
        convolution_2: "f32[48, 96, 10, 10]" = torch.ops.aten.convolution.default(getitem_6, primals_9, primals_10, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        native_batch_norm_2 = torch.ops.aten.native_batch_norm.default(convolution_2, primals_11, primals_12, primals_23, primals_24, True, 0.1, 1e-05)
        getitem_8: "f32[48, 96, 10, 10]" = native_batch_norm_2[0]
        getitem_9: "f32[96]" = native_batch_norm_2[1]
        getitem_10: "f32[96]" = native_batch_norm_2[2]
        relu_2: "f32[48, 96, 10, 10]" = torch.ops.aten.relu.default(getitem_8)
        mean: "f32[48, 96, 1, 1]" = torch.ops.aten.mean.dim(relu_2, [-1, -2], True)
        _reshape_alias: "f32[48, 96]" = torch.ops.aten._reshape_alias.default(mean, [48, 96], [96, 1])
        t: "f32[96, 100]" = torch.ops.aten.t.default(primals_13)
        addmm: "f32[48, 100]" = torch.ops.aten.addmm.default(primals_14, _reshape_alias, t)
        relu_3: "f32[48, 100]" = torch.ops.aten.relu.default(addmm)
        t_1: "f32[100, 10]" = torch.ops.aten.t.default(primals_15)
        addmm_1: "f32[48, 10]" = torch.ops.aten.addmm.default(primals_16, relu_3, t_1)
        return [addmm_1, getitem_9, primals_7, primals_9, primals_23, convolution_1, primals_11, relu_2, primals_1, getitem_1, getitem_6, _reshape_alias, primals_20, convolution, getitem_4, primals_3, relu_1, primals_21, convolution_2, getitem_7, primals_24, primals_18, t_1, relu, getitem_10, getitem_5, primals_5, primals_17, t, relu_3, primals_26, getitem_2]
        
