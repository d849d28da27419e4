"""An LLM-style greedy sampler: the next token of every sequence in a batch is the argmax of
its row of logits over the vocabulary (here Llama 3's 128256 tokens, in bfloat16), taken on
the GPU, on PyTorch's stream, inside a CUDA graph — where samplers run.

    python python/examples/greedy_sampler.py [--batch 64] [--steps 100]

The "model" is a random embedding and output projection, enough to make logits that change
from step to step. Each step's tokens are checked against torch.argmax.
"""

import argparse
import time

import torch

import reduce_rs

VOCAB = 128256


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=1024)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("this example needs a CUDA GPU for PyTorch")

    torch.manual_seed(0)
    embed = torch.randn(VOCAB, args.hidden, device="cuda", dtype=torch.bfloat16) * 0.02
    project = torch.randn(args.hidden, VOCAB, device="cuda", dtype=torch.bfloat16) * 0.02
    tokens = torch.randint(0, VOCAB, (args.batch,), device="cuda")

    def step(tokens):
        logits = embed[tokens] @ project  # (batch, VOCAB) bfloat16
        return logits, reduce_rs.argmax(logits, dim=-1)

    # Warm up on the stream the graph will be captured on (reduce_rs keeps its scratch memory
    # per stream and allocates it on first use, which a capture must not do).
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        step(tokens)
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    static_tokens = tokens.clone()
    with torch.cuda.graph(graph, stream=stream):
        static_logits, static_next = step(static_tokens)

    history = [tokens]
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(args.steps):
        graph.replay()
        assert torch.equal(static_next, torch.argmax(static_logits, dim=-1)), "token mismatch"
        static_tokens.copy_(static_next)
        history.append(static_next.clone())
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - started
    print(
        f"{args.steps} greedy steps of {args.batch} sequences over a {VOCAB}-token vocabulary: "
        f"{elapsed / args.steps * 1e3:.3f} ms a step (graph replay + check), every token "
        "equal to torch.argmax's"
    )
    print("first sequence:", [int(t[0]) for t in history[:12]], "…")


if __name__ == "__main__":
    main()
