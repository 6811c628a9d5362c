"""The testbed's models: name -> (builder, input maker(batch, generator), default batch per rank).

What it is for: bench/testbed/rank.py trains these over shaped links. Their
gradients (fp32) are 6-13 MB, so at 50-400 Mbit/s an all-reduce takes 0.1-2 s
and communication dominates a step, while a step's compute on one core is
tens of milliseconds. Not for: measuring compute speed.
"""
import torch

nn = torch.nn


def mlp(width=1024, hidden=3):
    """3 x 4 MiB weight matrices: a few mid-sized gradients."""
    layers = []
    for _ in range(hidden):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


class MatmulMLP(nn.Module):
    """mlp with one extra (1024 x 1024) matmul per layer in forward (and so
    in backward): the same gradients, really more compute. For the --scale
    check."""

    def __init__(self):
        super().__init__()
        self.body = mlp()
        self.register_buffer("extra", torch.eye(1024) * 0.5)

    def forward(self, x):
        for m in self.body:
            x = m(x)
            if isinstance(m, nn.Linear) and m.out_features == 1024:
                x = x @ self.extra
        return x


def cnn():
    """Conv layers of 0.01-1.2 MB and an 8 MB classifier."""
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(128, 256, 3, padding=1), nn.ReLU(),
        nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
        nn.Flatten(), nn.Linear(256 * 16, 512), nn.ReLU(), nn.Linear(512, 10))


class Transformer(nn.Module):
    """A 4-layer encoder (d_model 256, 4 heads, ff 1024): many gradients of 0.001-1 MB."""

    def __init__(self, d=256, layers=4, vocab=2000):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, 10)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


def wide():
    """A few very large gradients: two 4 MiB matrices and small rest."""
    return nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512), nn.ReLU(), nn.Linear(512, 10))


MODELS = {
    "mlp": (mlp, lambda b, g: torch.randn(b, 1024, generator=g), 16),
    "mlp_matmul": (MatmulMLP, lambda b, g: torch.randn(b, 1024, generator=g), 16),
    "cnn": (cnn, lambda b, g: torch.randn(b, 3, 32, 32, generator=g), 4),
    "transformer": (Transformer, lambda b, g: torch.randint(0, 2000, (b, 16), generator=g), 2),
    "wide": (wide, lambda b, g: torch.randn(b, 512, generator=g), 16),
}
