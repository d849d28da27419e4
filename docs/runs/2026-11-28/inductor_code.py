"""Dump the Triton code torch.compile generates for the shapes where it is ahead."""
import torch
cases = {
    "cols_4096": (lambda x: torch.sum(x, dim=0), (4096, 4096)),
    "cols_8192": (lambda x: torch.sum(x, dim=0), (8192, 8192)),
    "rows_8192": (lambda x: torch.sum(x, dim=-1), (8192, 8192)),
    "rows_65536x512": (lambda x: torch.sum(x, dim=-1), (65536, 512)),
    "amax_32768x4096": (lambda x: torch.amax(x, dim=-1), (32768, 4096)),
}
for name, (fn, shape) in cases.items():
    print(f"######## {name} {shape}", flush=True)
    x = torch.randn(*shape, device="cuda")
    f = torch.compile(fn, dynamic=False)
    f(x); torch.cuda.synchronize()
    torch._dynamo.reset()
