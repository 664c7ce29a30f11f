"""Time one GRPO-shaped step of a SmolLM-class Llama (GQA, tied embeddings) in PyTorch on this CPU:
the peer `dewpoint bench grpo --model SHAPE` runs beside itself (cli/bench/torch-peer.ts) when
`/usr/bin/python3 -c "import torch"` works (Debian: python3-torch and libopenblas0-pthread).

Random weights of the given shape; P prompts x G samples, prompt_len prompt ids, new_tokens sampled
with a KV cache, then forward+backward+clip+AdamW over the P*G sequences. Prints one JSON line:
sample_s, train_s, step_s (medians over --steps after a warm-up), peak RSS.
Usage: /usr/bin/python3 torch_step.py [--layers 30 --hidden 576 --heads 9 --kv-heads 3 --ffn 1536 --vocab 49152]
"""
import argparse, json, os, re, resource, statistics, time
import torch
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument('--layers', type=int, default=30)
ap.add_argument('--hidden', type=int, default=576)
ap.add_argument('--heads', type=int, default=9)
ap.add_argument('--kv-heads', type=int, default=3)
ap.add_argument('--ffn', type=int, default=1536)
ap.add_argument('--vocab', type=int, default=49152)
ap.add_argument('--prompts', type=int, default=8)
ap.add_argument('--group', type=int, default=4)
ap.add_argument('--prompt-len', type=int, default=64)
ap.add_argument('--new-tokens', type=int, default=64)
ap.add_argument('--steps', type=int, default=3)
ap.add_argument('--threads', type=int, default=2)
ap.add_argument('--blas', action='store_true', help='print the BLAS library torch multiplies with, and exit')
a = ap.parse_args()
torch.set_num_threads(a.threads)


def blas_library():
    """The BLAS shared object this process has mapped after a float matmul (Debian's torch links
    libblas.so.3, whose alternative may be the reference BLAS, ~10x slower than OpenBLAS)."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open('/proc/self/maps') as maps:
        paths = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    return sorted(os.path.realpath(q) for q in paths if re.search(r'/lib(open|flexi|mkl_rt|)blas[^/]*\.so', q))


if a.blas:
    print(json.dumps({'blas': blas_library()}))
    raise SystemExit(0)
torch.manual_seed(0)
C, H, KV, FF, V, L = a.hidden, a.heads, a.kv_heads, a.ffn, a.vocab, a.layers
hs = C // H
rep = H // KV


def p(*shape, std=0.02):
    return torch.nn.Parameter(torch.randn(*shape) * std)


emb = p(V, C)
layers = [dict(n1=torch.nn.Parameter(torch.ones(C)), q=p(C, C), k=p(KV * hs, C), v=p(KV * hs, C), o=p(C, C),
               n2=torch.nn.Parameter(torch.ones(C)), g=p(FF, C), u=p(FF, C), d=p(C, FF)) for _ in range(L)]
norm = torch.nn.Parameter(torch.ones(C))
params = [emb, norm] + [t for l in layers for t in l.values()]
nparams = sum(t.numel() for t in params)
inv = 1.0 / (10000.0 ** (torch.arange(0, hs, 2, dtype=torch.float32) / hs))


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w


def rot(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), -1)


def rope(pos):
    fr = pos[..., None].float() * inv
    e = torch.cat((fr, fr), -1)[:, None]
    return e.cos(), e.sin()


def block(l, x, cos, sin, cache=None, causal=True):
    B, T, _ = x.shape
    h = rms(x, l['n1'])
    q = (h @ l['q'].t()).view(B, T, H, hs).transpose(1, 2)
    k = (h @ l['k'].t()).view(B, T, KV, hs).transpose(1, 2)
    v = (h @ l['v'].t()).view(B, T, KV, hs).transpose(1, 2)
    q = q * cos + rot(q) * sin
    k = k * cos + rot(k) * sin
    if cache is not None and cache[0] is not None:
        k = torch.cat((cache[0], k), 2)
        v = torch.cat((cache[1], v), 2)
    kk = k.repeat_interleave(rep, 1)
    vv = v.repeat_interleave(rep, 1)
    s_ = (q @ kk.transpose(-1, -2)) / (hs ** 0.5)
    if causal and T > 1:
        Tk = kk.shape[2]
        s_ = s_.masked_fill(torch.ones(T, Tk, dtype=torch.bool).triu(Tk - T + 1), float('-inf'))
    a_ = torch.softmax(s_, -1) @ vv
    x = x + a_.transpose(1, 2).reshape(B, T, C) @ l['o'].t()
    h = rms(x, l['n2'])
    x = x + (F.silu(h @ l['g'].t()) * (h @ l['u'].t())) @ l['d'].t()
    return x, (k, v)


@torch.no_grad()
def sample(ids):
    B, T0 = ids.shape
    pos = torch.arange(T0)[None].expand(B, T0)
    cos, sin = rope(pos)
    x = F.embedding(ids, emb)
    caches = []
    for l in layers:
        x, c = block(l, x, cos, sin)
        caches.append(c)
    out = []
    for t in range(a.new_tokens):
        logits = rms(x[:, -1], norm) @ emb.t()
        nxt = torch.multinomial(torch.softmax(logits, -1), 1)
        out.append(nxt)
        cos, sin = rope(torch.full((B, 1), T0 + t))
        x = F.embedding(nxt, emb)
        for i, l in enumerate(layers):
            x, caches[i] = block(l, x, cos, sin, caches[i], causal=False)
    return torch.cat([ids] + out, 1)


opt = torch.optim.AdamW(params, lr=1e-6)


def train(seqs):
    B, T = seqs.shape
    cos, sin = rope(torch.arange(T)[None].expand(B, T))
    x = F.embedding(seqs, emb)
    for l in layers:
        x, _ = block(l, x, cos, sin)
    logits = rms(x, norm) @ emb.t()
    lp = torch.log_softmax(logits[:, :-1], -1).gather(-1, seqs[:, 1:, None]).squeeze(-1)
    adv = torch.randn(B, 1)
    loss = -(adv * torch.exp(lp - lp.detach()))[:, a.prompt_len - 1:].mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()


S, Tr = [], []
for step in range(a.steps + 1):
    ids = torch.randint(0, V, (a.prompts * a.group, a.prompt_len))
    t0 = time.time()
    seqs = sample(ids)
    t1 = time.time()
    train(seqs)
    t2 = time.time()
    if step > 0:
        S.append(t1 - t0)
        Tr.append(t2 - t1)
print(json.dumps({'impl': f'torch {torch.__version__}', 'threads': a.threads, 'params': nparams, 'blas': blas_library(),
                  'shape': dict(layers=L, hidden=C, heads=H, kv_heads=KV, ffn=FF, vocab=V),
                  'batch': dict(sequences=a.prompts * a.group, prompt_len=a.prompt_len, new_tokens=a.new_tokens),
                  'sample_s': statistics.median(S), 'train_s': statistics.median(Tr),
                  'step_s': statistics.median(S) + statistics.median(Tr),
                  'train_tokens_per_s': a.prompts * a.group * (a.prompt_len + a.new_tokens) / statistics.median(Tr),
                  'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
