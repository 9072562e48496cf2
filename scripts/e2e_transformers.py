"""Transformer blocks for the end-to-end tests: a BERT-style encoder layer and a small
GPT-style decoder block, written so that torch's exporter emits the operators real exports
of such models contain.

BERT (inputs: token ids and an attention mask, int64 [1, 16]): word/position/segment
embeddings (Gather), embedding LayerNorm, self-attention with a fused QKV projection cut by
Split, the padding mask turned into an additive bias with Cast/Equal/Where and Expand, GELU
(Erf), a pooler that weights tokens by a Softmax over the sequence axis (not the last axis),
and a slice of every other token counted from the end (Slice with a negative step).

GPT (input: token ids, int64 [batch, sequence], exported with those dims symbolic and compiled
with --input-shape=input_ids:1x16): positions from Shape -> Range, a causal mask from a comparison of
two Ranges, pre-LayerNorm attention and MLP, LogSoftmax over the vocabulary, and the last
token's log-probabilities sliced with negative indices.

nn.LayerNorm exports as the ReduceMean/Sub/Pow/Sqrt/Div chain before opset 17 and as
LayerNormalization at 17.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, SEQ, HIDDEN, HEADS, FFN = 512, 16, 64, 4, 256


def splitHeads(x):
    """[B, S, H*D] -> [B, H, S, D]"""
    b, s, _ = x.shape
    return x.view(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)


def mergeHeads(x):
    """[B, H, S, D] -> [B, S, H*D]"""
    b, _, s, _ = x.shape
    return x.transpose(1, 2).reshape(b, s, HIDDEN)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x, bias):
        q, k, v = self.qkv(x).split(HIDDEN, dim=-1)
        q, k, v = splitHeads(q), splitHeads(k), splitHeads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS)
        probs = F.softmax(scores + bias, dim=-1)
        return self.out(mergeHeads(torch.matmul(probs, v)))


class BertLayer(nn.Module):
    """Embeddings + one post-LayerNorm encoder layer + an attention pooler."""

    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(VOCAB, HIDDEN)
        self.positions = nn.Embedding(SEQ, HIDDEN)
        self.segments = nn.Embedding(2, HIDDEN)
        self.embed_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.attention = SelfAttention()
        self.attention_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, FFN), nn.GELU(), nn.Linear(FFN, HIDDEN))
        self.ffn_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.pool_score = nn.Linear(HIDDEN, 1)

    def forward(self, ids, mask):
        b, s = ids.shape
        positions = torch.arange(s, dtype=torch.int64).unsqueeze(0)
        segments = (positions >= s // 2).long()  # second half: sentence B
        x = self.words(ids) + self.positions(positions) + self.segments(segments)
        x = self.embed_norm(x)
        # mask: 1 = token, 0 = padding -> additive bias of [B, H, S, S]
        padding = torch.eq(mask, 0).view(b, 1, 1, s).expand(b, HEADS, s, s)
        bias = torch.where(padding, torch.tensor(-10000.0), torch.tensor(0.0))
        x = self.attention_norm(x + self.attention(x, bias))
        x = self.ffn_norm(x + self.ffn(x))
        # Attention pooling: Softmax over the sequence axis (axis 1 of [B, S, 1]).
        weights = F.softmax(self.pool_score(x) + (mask.to(torch.float32).unsqueeze(-1) - 1)
                            * 10000.0, dim=1)
        pooled = (weights * x).sum(dim=1)
        every_other = x.flip(1)[:, ::2]  # Slice with a negative step (flip) and a step of 2
        return torch.cat([pooled, every_other.mean(dim=1)], dim=-1)


class GptBlock(nn.Module):
    """Token + position embeddings, one pre-LayerNorm decoder block, tied output projection."""

    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(VOCAB, HIDDEN)
        self.positions = nn.Embedding(SEQ, HIDDEN)
        self.norm1 = nn.LayerNorm(HIDDEN)
        self.attention = SelfAttention()
        self.norm2 = nn.LayerNorm(HIDDEN)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, FFN), nn.GELU(), nn.Linear(FFN, HIDDEN))
        self.final_norm = nn.LayerNorm(HIDDEN)

    def forward(self, ids):
        s = ids.shape[1]
        rows = torch.arange(s, dtype=torch.int64)
        causal = rows.unsqueeze(1) >= rows.unsqueeze(0)  # [S, S]: query may see key
        bias = torch.where(causal, torch.tensor(0.0), torch.tensor(-1e4))
        x = self.words(ids) + self.positions(rows.unsqueeze(0))
        x = x + self.attention(self.norm1(x), bias)
        x = x + self.mlp(self.norm2(x))
        logits = torch.matmul(self.final_norm(x), self.words.weight.t())
        logprobs = F.log_softmax(logits, dim=-1)
        return logprobs[:, -4:-1]  # negative indices


def tokenInputs(rng, with_mask):
    ids = torch.from_numpy(rng.randint(0, VOCAB, size=(1, SEQ)).astype("int64"))
    if not with_mask:
        return (ids,)
    mask = torch.ones(1, SEQ, dtype=torch.int64)
    mask[0, SEQ - 5:] = 0  # five padding tokens
    return ids, mask


# family: (constructor, input maker, input names, dynamic). GPT is exported with symbolic batch
# and sequence dims, as such models usually are: its Shape -> Gather -> Range chains stay in the
# model and kiln compiles it with --input-shape.
FAMILIES = {
    "bert_layer": (BertLayer, lambda rng: tokenInputs(rng, True), ["input_ids", "mask"], False),
    "gpt_block": (GptBlock, lambda rng: tokenInputs(rng, False), ["input_ids"], True),
}
