class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[2048, 1024]", primals_2: "f32[2048]", primals_3: "f32[2048, 2048]", primals_4: "f32[2048]", primals_5: "f32[10, 2048]", primals_6: "f32[10]", primals_7: "f32[256, 1024]"):
        t: "f32[1024, 2048]" = torch.ops.aten.t.default(primals_1)
        addmm: "f32[256, 2048]" = torch.ops.aten.addmm.default(primals_2, primals_7, t)
        relu: "f32[256, 2048]" = torch.ops.aten.relu.default(addmm)
        t_1: "f32[2048, 2048]" = torch.ops.aten.t.default(primals_3)
        addmm_1: "f32[256, 2048]" = torch.ops.aten.addmm.default(primals_4, relu, t_1)
        relu_1: "f32[256, 2048]" = torch.ops.aten.relu.default(addmm_1)
        t_2: "f32[2048, 10]" = torch.ops.aten.t.default(primals_5)
        addmm_2: "f32[256, 10]" = torch.ops.aten.addmm.default(primals_6, relu_1, t_2)
        return [addmm_2, t_2, relu_1, primals_7, relu, t_1]
        
