class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[12, 3, 3, 3]", primals_2: "f32[12]", primals_3: "f32[12]", primals_4: "f32[12]", primals_5: "f32[40, 12, 3, 3]", primals_6: "f32[40]", primals_7: "f32[40]", primals_8: "f32[40]", primals_9: "f32[72, 40, 3, 3]", primals_10: "f32[72]", primals_11: "f32[72]", primals_12: "f32[72]", primals_13: "f32[128, 72, 1, 1]", primals_14: "f32[128]", primals_15: "f32[128]", primals_16: "f32[128]", primals_17: "f32[10, 128]", primals_18: "f32[10]", primals_19: "f32[12]", primals_20: "f32[12]", primals_21: "i64[]", primals_22: "f32[40]", primals_23: "f32[40]", primals_24: "i64[]", primals_25: "f32[72]", primals_26: "f32[72]", primals_27: "i64[]", primals_28: "f32[128]", primals_29: "f32[128]", primals_30: "i64[]", primals_31: "f32[32, 3, 56, 56]"):
        convolution: "f32[32, 12, 56, 56]" = torch.ops.aten.convolution.default(primals_31, primals_1, primals_2, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        native_batch_norm = torch.ops.aten.native_batch_norm.default(convolution, primals_3, primals_4, primals_19, primals_20, True, 0.1, 1e-05)
        getitem: "f32[32, 12, 56, 56]" = native_batch_norm[0]
        getitem_1: "f32[12]" = native_batch_norm[1]
        getitem_2: "f32[12]" = native_batch_norm[2]
        relu: "f32[32, 12, 56, 56]" = torch.ops.aten.relu.default(getitem)
        convolution_1: "f32[32, 40, 28, 28]" = torch.ops.aten.convolution.default(relu, primals_5, primals_6, [2, 2], [1, 1], [1, 1], False, [0, 0], 1)
        native_batch_norm_1 = torch.ops.aten.native_batch_norm.default(convolution_1, primals_7, primals_8, primals_22, primals_23, True, 0.1, 1e-05)
        getitem_3: "f32[32, 40, 28, 28]" = native_batch_norm_1[0]
        getitem_4: "f32[40]" = native_batch_norm_1[1]
        getitem_5: "f32[40]" = native_batch_norm_1[2]
        relu_1: "f32[32, 40, 28, 28]" = torch.ops.aten.relu.default(getitem_3)
        convolution_2: "f32[32, 72, 28, 28]" = torch.ops.aten.convolution.default(relu_1, primals_9, primals_10, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        native_batch_norm_2 = torch.ops.aten.native_batch_norm.default(convolution_2, primals_11, primals_12, primals_25, primals_26, True, 0.1, 1e-05)
        getitem_6: "f32[32, 72, 28, 28]" = native_batch_norm_2[0]
        getitem_7: "f32[72]" = native_batch_norm_2[1]
        getitem_8: "f32[72]" = native_batch_norm_2[2]
        relu_2: "f32[32, 72, 28, 28]" = torch.ops.aten.relu.default(getitem_6)
        max_pool2d_with_indices = torch.ops.aten.max_pool2d_with_indices.default(relu_2, [2, 2], [2, 2])
        getitem_9: "f32[32, 72, 14, 14]" = max_pool2d_with_indices[0]
        getitem_10: "i64[32, 72, 14, 14]" = max_pool2d_with_indices[1]
        convolution_3: "f32[32, 128, 14, 14]" = torch.ops.aten.convolution.default(getitem_9, primals_13, primals_14, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
        native_batch_norm_3 = torch.ops.aten.native_batch_norm.default(convolution_3, primals_15, primals_16, primals_28, primals_29, True, 0.1, 1e-05)
        getitem_11: "f32[32, 128, 14, 14]" = native_batch_norm_3[0]
        getitem_12: "f32[128]" = native_batch_norm_3[1]
        getitem_13: "f32[128]" = native_batch_norm_3[2]
        relu_3: "f32[32, 128, 14, 14]" = torch.ops.aten.relu.default(getitem_11)
        mean: "f32[32, 128, 1, 1]" = torch.ops.aten.mean.dim(relu_3, [-1, -2], True)
        _reshape_alias: "f32[32, 128]" = torch.ops.aten._reshape_alias.default(mean, [32, 128], [128, 1])
        t: "f32[128, 10]" = torch.ops.aten.t.default(primals_17)
        addmm: "f32[32, 10]" = torch.ops.aten.addmm.default(primals_18, _reshape_alias, t)
        return [addmm, primals_5, getitem_2, convolution_3, primals_22, convolution_1, primals_3, primals_19, getitem_12, relu_2, primals_13, primals_1, relu_3, primals_26, primals_23, primals_7, getitem_1, primals_11, primals_28, primals_31, getitem_7, t, primals_15, relu_1, primals_20, getitem_8, getitem_10, primals_25, primals_29, convolution, getitem_13, primals_9, getitem_4, getitem_9, relu, getitem_5, _reshape_alias, convolution_2]
        
