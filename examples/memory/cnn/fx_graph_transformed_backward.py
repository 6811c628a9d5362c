class GraphModule(torch.nn.Module):
    def forward(self, convolution: "f32[64, 32, 32, 32]", primals_7: "f32[64]", getitem_1: "f32[32]", relu: "f32[64, 32, 32, 32]", _reshape_alias: "f32[64, 64]", primals_5: "f32[64, 32, 3, 3]", getitem_3: "f32[64, 32, 16, 16]", t: "f32[64, 10]", primals_1: "f32[32, 3, 3, 3]", primals_14: "f32[64]", primals_11: "f32[32]", getitem_2: "f32[32]", getitem_4: "i64[64, 32, 16, 16]", primals_15: "f32[64]", relu_1: "f32[64, 64, 16, 16]", getitem_7: "f32[64]", primals_12: "f32[32]", primals_3: "f32[32]", primals_17: "f32[64, 3, 32, 32]", convolution_1: "f32[64, 64, 16, 16]", getitem_6: "f32[64]", tangents_1: "f32[64, 10]"):
        detach_1: "f32[64, 32, 32, 32]" = torch.ops.aten.detach.default(relu)
        detach_2: "f32[64, 32, 32, 32]" = torch.ops.aten.detach.default(detach_1)
        detach_4: "f32[64, 64, 16, 16]" = torch.ops.aten.detach.default(relu_1)
        detach_5: "f32[64, 64, 16, 16]" = torch.ops.aten.detach.default(detach_4)
        t_1: "f32[10, 64]" = torch.ops.aten.t.default(t)
        mm: "f32[64, 64]" = torch.ops.aten.mm.default(tangents_1, t_1)
        t_2: "f32[10, 64]" = torch.ops.aten.t.default(tangents_1)
        mm_1: "f32[10, 64]" = torch.ops.aten.mm.default(t_2, _reshape_alias)
        t_3: "f32[64, 10]" = torch.ops.aten.t.default(mm_1)
        sum_1: "f32[1, 10]" = torch.ops.aten.sum.dim_IntList(tangents_1, [0], True)
        view: "f32[10]" = torch.ops.aten.view.default(sum_1, [10])
        t_4: "f32[10, 64]" = torch.ops.aten.t.default(t_3)
        _reshape_alias_1: "f32[64, 64, 1, 1]" = torch.ops.aten._reshape_alias.default(mm, [64, 64, 1, 1], [64, 1, 1, 1])
        expand: "f32[64, 64, 16, 16]" = torch.ops.aten.expand.default(_reshape_alias_1, [64, 64, 16, 16])
        div: "f32[64, 64, 16, 16]" = torch.ops.aten.div.Scalar(expand, 256)
        detach_6: "f32[64, 64, 16, 16]" = torch.ops.aten.detach.default(detach_5)
        detach_7: "f32[64, 64, 16, 16]" = torch.ops.aten.detach.default(detach_6)
        threshold_backward: "f32[64, 64, 16, 16]" = torch.ops.aten.threshold_backward.default(div, detach_7, 0)
        native_batch_norm_backward = torch.ops.aten.native_batch_norm_backward.default(threshold_backward, convolution_1, primals_7, primals_14, primals_15, getitem_6, getitem_7, True, 1e-05, [True, True, True])
        getitem_8: "f32[64, 64, 16, 16]" = native_batch_norm_backward[0]
        getitem_9: "f32[64]" = native_batch_norm_backward[1]
        getitem_10: "f32[64]" = native_batch_norm_backward[2]
        convolution_backward = torch.ops.aten.convolution_backward.default(getitem_8, getitem_3, primals_5, [64], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
        getitem_11: "f32[64, 32, 16, 16]" = convolution_backward[0]
        getitem_12: "f32[64, 32, 3, 3]" = convolution_backward[1]
        getitem_13: "f32[64]" = convolution_backward[2]
        max_pool2d_with_indices_backward: "f32[64, 32, 32, 32]" = torch.ops.aten.max_pool2d_with_indices_backward.default(getitem_11, relu, [2, 2], [2, 2], [0, 0], [1, 1], False, getitem_4)
        detach_8: "f32[64, 32, 32, 32]" = torch.ops.aten.detach.default(detach_2)
        detach_9: "f32[64, 32, 32, 32]" = torch.ops.aten.detach.default(detach_8)
        threshold_backward_1: "f32[64, 32, 32, 32]" = torch.ops.aten.threshold_backward.default(max_pool2d_with_indices_backward, detach_9, 0)
        native_batch_norm_backward_1 = torch.ops.aten.native_batch_norm_backward.default(threshold_backward_1, convolution, primals_3, primals_11, primals_12, getitem_1, getitem_2, True, 1e-05, [True, True, True])
        getitem_14: "f32[64, 32, 32, 32]" = native_batch_norm_backward_1[0]
        getitem_15: "f32[32]" = native_batch_norm_backward_1[1]
        getitem_16: "f32[32]" = native_batch_norm_backward_1[2]
        convolution_backward_1 = torch.ops.aten.convolution_backward.default(getitem_14, primals_17, primals_1, [32], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [False, True, True])
        getitem_18: "f32[32, 3, 3, 3]" = convolution_backward_1[1]
        getitem_19: "f32[32]" = convolution_backward_1[2]
        return [getitem_18, getitem_19, getitem_15, getitem_16, getitem_12, getitem_13, getitem_9, getitem_10, t_4, view, None, None, None, None, None, None, None]
        
