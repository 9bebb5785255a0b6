"""How far is PyTorch's fused CPU AdamW from the per-tensor step, and how much
faster is it? The trainer steps the fused kernel (train::FusedAdamW), which
agrees with the per-tensor step to rounding (docs/PERFORMANCE.md, Training step).

    OMP_WAIT_POLICY=PASSIVE /opt/cadclip/venv/bin/python bench/train/adamw_bits.py
"""
import time

import torch


def main():
    torch.manual_seed(0)
    torch.set_num_threads(2)
    shapes = [(384, 384), (384,), (1536, 384), (256, 256), (256,)] * 8
    params = [torch.randn(s) for s in shapes]
    grads = [torch.randn_like(p) for p in params]

    def five_steps(**kind):
        q = [p.clone().requires_grad_() for p in params]
        opt = torch.optim.AdamW(q, lr=1e-3, weight_decay=0.05, **kind)
        for step in range(5):
            for x, g in zip(q, grads):
                x.grad = g * (step + 1)
            opt.step()
        return q

    single = five_steps(foreach=False)
    for name, kind in [("foreach", dict(foreach=True)), ("fused", dict(fused=True))]:
        other = five_steps(**kind)
        same = all(torch.equal(a, b) for a, b in zip(single, other))
        worst = max((a - b).abs().max().item() for a, b in zip(single, other))
        print(f"{name} == single-tensor after 5 steps: {same} (largest difference {worst:.3g})")
    for name, kind in [("single", dict(foreach=False)), ("foreach", dict(foreach=True)),
                       ("fused", dict(fused=True))]:
        q = [p.clone().requires_grad_() for p in params]
        opt = torch.optim.AdamW(q, lr=1e-3, **kind)
        for x, g in zip(q, grads):
            x.grad = g
        opt.step()
        start = time.perf_counter()
        for _ in range(50):
            opt.step()
        print(f"{name}: {(time.perf_counter() - start) / 50 * 1e3:.1f} ms per step")


if __name__ == "__main__":
    main()
