"""The B-Rep encoder written independently in PyTorch-Python: the reference
for cadclip's C++ encoder (docs/MODEL.md). It computes every token in the
padded [B, S, d] layout (the C++ code packs tokens), so agreement checks the
packing as well as the formulas. Parameter names equal the C++ module paths,
so a C++ state dict loads as is.

    python brep_encoder_reference.py --check FILE.safetensors

FILE holds the C++ parameters ("param.*"), a collated batch ("batch.*"), the
C++ output ("output") and the options as metadata; exit 0 when the outputs
agree within 1e-5.
"""
import argparse
import math
import sys

import torch
import torch.nn as nn

SURFACE_TYPES, CURVE_TYPES, CONVEXITIES = 11, 9, 3
FACE_ATTRS, EDGE_ATTRS, GRAPH_ATTRS = 6, 1, 4


def bias_mlp(inputs, hidden, heads):
    return nn.Sequential(nn.Linear(inputs, hidden), nn.GELU(), nn.Linear(hidden, heads))


class Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x, bias):  # x: [B, S, d]; bias: [B, H, S, S]
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads) + bias
        weights = torch.softmax(scores.float(), dim=-1)
        return self.out((weights @ v).permute(0, 2, 1, 3).reshape(b, s, d))


class SwiGlu(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.w13 = nn.Linear(width, 2 * hidden, bias=False)
        self.w2 = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        gate, value = self.w13(x).chunk(2, dim=-1)
        return self.w2(nn.functional.silu(gate) * value)


class Layer(nn.Module):
    def __init__(self, width, heads, hidden, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attention = Attention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.ffn = SwiGlu(width, hidden)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, bias):
        h = x + self.dropout(self.attention(self.norm1(x), bias))
        return h + self.dropout(self.ffn(self.norm2(h)))


class BRepEncoder(nn.Module):
    def __init__(self, width=256, layers=6, heads=8, ffn_hidden=768, face_channels=64,
                 edge_width=64, max_hops=16, dropout=0.1):
        super().__init__()
        c, e = face_channels, edge_width
        self.heads, self.max_hops = heads, max_hops
        self.face_cnn = nn.Sequential(
            nn.Conv2d(7, c // 2, 3, padding=1), nn.GELU(),
            nn.Conv2d(c // 2, c, 3, stride=2, padding=1), nn.GELU(),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.GELU())
        self.face_type = nn.Embedding(SURFACE_TYPES, 32)
        self.face_attr_mlp = nn.Sequential(nn.Linear(FACE_ATTRS, 32), nn.GELU(), nn.Linear(32, 32))
        self.face_proj = nn.Linear(2 * c + 64, width)
        self.edge_cnn = nn.Sequential(
            nn.Conv1d(12, e // 2, 3, padding=1), nn.GELU(),
            nn.Conv1d(e // 2, e, 3, padding=1), nn.GELU())
        self.edge_type = nn.Embedding(CURVE_TYPES, 16)
        self.edge_convexity = nn.Embedding(CONVEXITIES, 8)
        self.edge_mlp = bias_mlp(e + 16 + 8 + EDGE_ATTRS, e, heads)
        self.no_edge_bias = nn.Parameter(torch.zeros(heads))
        self.hop_bias = nn.Embedding(max_hops + 2, heads)
        self.angle_mlp = bias_mlp(2, 16, heads)
        self.distance_mlp = bias_mlp(1, 16, heads)
        self.global_token = nn.Parameter(torch.zeros(width))
        self.graph_mlp = nn.Sequential(nn.Linear(GRAPH_ATTRS, 32), nn.GELU(), nn.Linear(32, width))
        self.global_bias = nn.Parameter(torch.zeros(2, heads))
        self.layers = nn.ModuleList(Layer(width, heads, ffn_hidden, dropout) for _ in range(layers))
        self.final_norm = nn.LayerNorm(width)

    def attention_bias(self, batch):  # -> [B, H, S, S]
        hops = batch["hops"]
        b, m, _ = hops.shape
        hop_index = torch.where(hops < 0, torch.full_like(hops, self.max_hops + 1),
                                hops.clamp(max=self.max_hops))
        pair = (self.hop_bias(hop_index)
                + self.angle_mlp(torch.stack([batch["normal_angle"], batch["angle_defined"]], -1))
                + self.distance_mlp(batch["centroid_distance"].unsqueeze(-1)))  # [B, M, M, H]
        curve = self.edge_cnn(batch["edge_grids"]).mean(2)
        values = self.edge_mlp(torch.cat([curve, self.edge_type(batch["edge_types"]),
                                          self.edge_convexity(batch["edge_convexity"]),
                                          batch["edge_attrs"]], 1))
        sums = torch.zeros(b * m * m, self.heads).index_add(0, batch["edge_pair"], values)
        counts = torch.zeros(b * m * m).index_add(0, batch["edge_pair"],
                                                  torch.ones(values.shape[0]))
        edge = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None],
                           self.no_edge_bias.expand(b * m * m, -1))
        pair = (pair + edge.view(b, m, m, -1)).permute(0, 3, 1, 2)
        bias = torch.empty(b, self.heads, m + 1, m + 1)
        bias[:, :, 0, :] = self.global_bias[0].view(1, -1, 1)
        bias[:, :, 1:, 0] = self.global_bias[1].view(1, -1, 1)
        bias[:, :, 1:, 1:] = pair
        key_padding = torch.cat([torch.zeros(b, 1, dtype=torch.bool), batch["padding_mask"]], 1)
        return bias.masked_fill(key_padding[:, None, None, :], float("-inf"))

    def forward(self, batch):  # -> [B, d]
        b, m = batch["padding_mask"].shape
        faces = self.face_cnn(batch["face_grids"]).mean((2, 3))
        faces = self.face_proj(torch.cat([faces, self.face_type(batch["face_types"]),
                                          self.face_attr_mlp(batch["face_attrs"])], 1))
        x = torch.zeros(b * (m + 1), faces.shape[1])
        x[torch.arange(b) * (m + 1)] = self.global_token + self.graph_mlp(batch["graph_attrs"])
        x[batch["face_slot"] + batch["face_graph"] + 1] = faces
        x = x.view(b, m + 1, -1)
        bias = self.attention_bias(batch)
        for layer in self.layers:
            x = layer(x, bias)
        return self.final_norm(x[:, 0])


def load(path):
    from safetensors import safe_open
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    options = {k: (float(v) if k == "dropout" else int(v)) for k, v in meta.items()}
    model = BRepEncoder(**options)
    state = {k[len("param."):]: v for k, v in tensors.items() if k.startswith("param.")}
    model.load_state_dict(state, strict=True)
    batch = {k[len("batch."):]: v for k, v in tensors.items() if k.startswith("batch.")}
    return model.eval(), batch, tensors["output"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", required=True, help="safetensors file written by the C++ test")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, batch, expected = load(args.check)
    with torch.no_grad():
        got = model(batch)
    diff = (got - expected).abs().max().item()
    print(f"brep_encoder_reference: max |python - c++| = {diff:.3e} over {tuple(got.shape)}")
    return 0 if diff <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
