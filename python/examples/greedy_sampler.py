"""An LLM-style greedy sampler: the next token of every sequence in a batch is the argmax of
its row of logits over the vocabulary (here Llama 3's 128256 tokens, in bfloat16), taken on
the GPU, on PyTorch's stream, inside a CUDA graph — where samplers run.

    python python/examples/greedy_sampler.py [--batch 64] [--steps 100] [--compile]

The "model" is a random embedding and output projection, enough to make logits that change
from step to step. Each step's tokens are checked against torch.argmax. The graph is captured
by hand (``torch.cuda.graph``), or with ``--compile`` by ``torch.compile(mode="reduce-overhead",
fullgraph=True)``, in whose graph ``reduce_rs.argmax`` is one custom operator.
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
    parser.add_argument("--compile", action="store_true", help="torch.compile the step instead")
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

    if args.compile:
        # torch.compile warms up and captures on a stream of its own (the warm-up allocates
        # reduce_rs's scratch memory there, before the capture). The weights are marked static,
        # else each replay would copy them into the graph's inputs.
        torch._dynamo.mark_static_address(embed)
        torch._dynamo.mark_static_address(project)
        compiled = torch.compile(step, mode="reduce-overhead", fullgraph=True)

        def replay(tokens):
            # The outputs live in the graph's memory until its next replay, as below.
            logits, next_tokens = compiled(tokens)
            return logits, next_tokens.clone()

        how = "torch.compile, reduce-overhead"
    else:
        # Warm up on the stream the graph will be captured on (reduce_rs keeps its scratch
        # memory per stream and allocates it on first use, which a capture must not do).
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            step(tokens)
        stream.synchronize()
        graph = torch.cuda.CUDAGraph()
        static_tokens = tokens.clone()
        with torch.cuda.graph(graph, stream=stream):
            static_logits, static_next = step(static_tokens)

        def replay(tokens):
            static_tokens.copy_(tokens)
            graph.replay()
            return static_logits, static_next.clone()

        how = "graph replay"

    if args.compile:
        # Compiled, warmed up and captured before the clock starts, as the graph by hand is.
        for _ in range(3):
            replay(tokens)
    history = [tokens]
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(args.steps):
        logits, tokens = replay(tokens)
        assert torch.equal(tokens, torch.argmax(logits, dim=-1)), "token mismatch"
        history.append(tokens)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - started
    print(
        f"{args.steps} greedy steps of {args.batch} sequences over a {VOCAB}-token vocabulary: "
        f"{elapsed / args.steps * 1e3:.3f} ms a step ({how} + check), every token "
        "equal to torch.argmax's"
    )
    print("first sequence:", [int(t[0]) for t in history[:12]], "…")


if __name__ == "__main__":
    main()
