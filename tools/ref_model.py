#!/usr/bin/python3
"""ref_model.py — a PyTorch reference of attend's encoder–decoder, for
tests/test_model_ref.c.

    /usr/bin/python3 tools/ref_model.py

(Debian's interpreter: it has torch 1.13 and numpy.) The model below is
ordinary torch.nn code — nn.Embedding(padding_idx=0), a bidirectional
nn.GRU/nn.LSTM over pack_padded_sequence, nn.Linear bridge with tanh,
attention modules, nn.GRUCell/nn.LSTMCell decoder, nn.Linear output and
F.cross_entropy(ignore_index=0) — written from the equations in
include/attend.h (section "model") and seed 004, not from src/seq2seq/model.c. Its
state_dict names and shapes are exactly the tensor names of our model files
(layout_tensors() in src/seq2seq/model.c), in the same order.

For every model in MODELS the script
  1. builds the model in float32 with PyTorch's default initialisation under a
     fixed torch seed (attention parameters, which have no nn counterpart,
     get nn.Linear's rule: U(±1/sqrt(fan_in)); b and v U(±1/sqrt(A))),
  2. trains it briefly in float64 with torch.optim.Adam on a synthetic task
     (reverse for the token decoders, sort for the pointer decoder) so that
     greedy decoding has structure (EOS, copies), then rounds every
     parameter to float32 — these are the weights the C library loads,
  3. writes tests/ref/model_<name>.safetensors by hand in our model-file
     format (8-byte little-endian header length, JSON header padded with
     spaces to a multiple of 8, raw little-endian F32 data; __metadata__ with
     attend.format, attend.config, attend.tokenizer, attend.src_vocab,
     attend.tgt_vocab — see attend_model_save in src/io/model_io.c and
     docs/FORMAT.md), laid out as our writer lays it out, so loading the
     file and saving it again with attend_model_save gives the same bytes,
  4. evaluates, in float64 from those float32 weights, one fixed padded batch
     (unequal source and target lengths, random targets so the loss and the
     gradients are far from zero): the mean loss, teacher-forcing statistics,
     the gradient of every parameter, and greedy decodes of a few sources,
     and writes them to tests/ref/model_<name>.txt.
Models with a stacked decoder (DEC_LAYER_MODELS, "dl2_*": dec_layers = 2,
layer 0 the cell above as decoder.weight_ih ..., layer l > 0 an
nn.GRUCell/nn.LSTMCell(Hd, Hd) on layer l-1's new state whose parameters are
registered as decoder.weight_ih_l<l> ..., every layer starting from the
bridge's s_0, the attention query and the features the top layer's state)
are written the same way; only those:

    /usr/bin/python3 tools/ref_model.py --only dl2_

Models with a transformer encoder (TRANSFORMER_MODELS, "tf_*", issue 27)
likewise, with tests/ref/model_tf_missing.safetensors (a layer tensor left
out) and model_tf_bad_ffn.safetensors (enc_hidden one wider than the
tensors); only those:

    /usr/bin/python3 tools/ref_model.py --only tf_

Models with a convolutional encoder (CONV_MODELS, "cv_*") likewise, with
tests/ref/model_cv_bad_kernel.safetensors (kernel two wider than the
tensors):

    /usr/bin/python3 tools/ref_model.py --only cv_

Models with the transformer decoder over the transformer encoder
(TDEC_MODELS, "td_*": nn.TransformerDecoder, a causal tgt_mask, the source
padding as memory_key_padding_mask; the alignments are the top layer's
cross-attention weights averaged over the heads, read by calling its
multihead_attn again with need_weights; greedy decoding recomputes the whole
prefix at every step, the C side uses its key/value cache) likewise, with
model_td_missing.safetensors (a cross-attention tensor left out) and
model_td_bad_ffn.safetensors (dec_hidden one wider than the tensors):

    /usr/bin/python3 tools/ref_model.py --only td_

It also writes tests/ref/model_bad_width.safetensors: the first model's
tensors under a configuration whose dec_hidden is one wider, which the loader
must reject naming 'bridge.weight'.

Text format (the one of tools/make_rnn_ref.py): "# comment" lines, then per
tensor a line "<name> <ndim> <d0> ..." and its values, row-major, one row of
the last dimension per line. Tensors, in order:
    src [N,S], src_len [N], tgt_in [N,T], tgt_out [N,T], tgt_len [N]
        (attend_batch layout; POINTER: positions, -1 = start / ignored)
    loss [1], tokens [1], correct_tokens [1], correct_seqs [1], attn_entropy [1]
    grad.<tensor name> for every parameter, in file order
    greedy_src [M,S2], greedy_src_len [M], greedy_max_len [1],
    greedy_out [M,max_len] (PAD after the end), greedy_out_len [M],
    greedy_align [M,max_len,S2] (zero rows after the end and for NONE)
The comment lines state the smallest top-1/top-2 gap of every argmax taken
(teacher-forced statistics and greedy steps); the script refuses gaps below
1e-4, far above float32 rounding, so the C argmaxes must agree exactly.

Deterministic: torch on one thread, fixed seeds, numpy PCG64 for data;
running the script twice writes byte-identical files.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref"))
PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
SRC_SYMBOLS = list("abcdef")    # source vocabulary: 4 + 6 = 10
TGT_SYMBOLS = list("ABCDEFG")   # target vocabulary: 4 + 7 = 11 (differs from the source's on purpose)
MIN_GAP = 1e-4                  # smallest accepted argmax margin

torch.set_num_threads(1)

# name, configuration (every field of attend_model_config), torch seed, training steps
COMMON = dict(src_vocab=4 + len(SRC_SYMBOLS), tgt_vocab=4 + len(TGT_SYMBOLS), emb=6, max_batch=4,
              max_src_len=6, max_tgt_len=7)
MODELS = [
    # (1) seed 004: GRU encoder/decoder, Bahdanau decoder, additive attention
    ("gru_bahdanau_additive",
     dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4),
     4001, 300),
    # (2) Luong: input feeding, general (bilinear) score
    ("gru_luong_general",
     dict(cell="gru", decoder="luong", score="general", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4),
     4002, 300),
    # (3) LSTM, two stacked bidirectional layers, Bahdanau with scaled dot (Hd == 2H)
    ("lstm_bahdanau_scaled_dot",
     dict(cell="lstm", decoder="bahdanau", score="scaled_dot", enc_hidden=4, enc_layers=2, dec_hidden=8, attn=4),
     4003, 300),
    # (4) pointer network (Vinyals), LSTM, additive; no target vocabulary
    ("lstm_pointer_additive",
     dict(cell="lstm", decoder="pointer", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4),
     4004, 300),
    # (5) the fixed-context baseline: c_t = [h_fwd; h_bwd] for every step
    ("gru_none",
     dict(cell="gru", decoder="none", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4),
     4005, 300),
]
# (6)-(9) a two-layer decoder (src/seq2seq/decoders/stack.c): GRU and LSTM,
# Bahdanau (query: the top layer's s_{t-1}) and Luong (query: the top s_t)
DEC_LAYER_MODELS = [
    ("dl2_gru_bahdanau_additive",
     dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4,
          dec_layers=2), 4011, 300),
    ("dl2_lstm_bahdanau_additive",
     dict(cell="lstm", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4,
          dec_layers=2), 4012, 300),
    ("dl2_gru_luong_general",
     dict(cell="gru", decoder="luong", score="general", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4,
          dec_layers=2), 4013, 300),
    ("dl2_lstm_luong_general",
     dict(cell="lstm", decoder="luong", score="general", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4,
          dec_layers=2), 4014, 300),
]

# (10)-(12) the transformer encoder (src/seq2seq/encoders/transformer.c, issue
# 27): nn.TransformerEncoderLayer(emb, heads, enc_hidden, dropout=0,
# batch_first=True, norm_first=not post_norm) layers under
# nn.TransformerEncoder (final LayerNorm for pre-norm), positions added to the
# embeddings, padding as src_key_padding_mask; E = emb, the bridge reads the
# mean of the valid states. Only those: --only tf_
TRANSFORMER_MODELS = [
    ("tf_pre_sin_gru_bahdanau_additive",
     dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=10, enc_layers=2, dec_hidden=7, attn=4,
          encoder="transformer", heads=2, positions="sinusoidal", post_norm=0), 4021, 300),
    ("tf_post_learned_lstm_luong_general",
     dict(cell="lstm", decoder="luong", score="general", enc_hidden=8, enc_layers=1, dec_hidden=7, attn=4,
          encoder="transformer", heads=3, positions="learned", post_norm=1, max_positions=8), 4022, 300),
    ("tf_none_gru_bahdanau_dot",
     dict(cell="gru", decoder="bahdanau", score="dot", enc_hidden=8, enc_layers=1, dec_hidden=6, attn=4,
          encoder="transformer", heads=1, positions="none", post_norm=0), 4023, 300),
]

# (13)-(14) the convolutional encoder (src/seq2seq/encoders/conv.c, ConvS2S's):
# per layer x' = sqrt(1/2) (x + glu(nn.Conv1d(emb, 2 emb, kernel,
# padding=kernel//2)(x with padding positions zeroed))) (conv_relu: relu of a
# Conv1d to emb channels); the Conv1d weight [C, D, k] is written as [C, D*k]
# in its memory order. Only those: --only cv_
CONV_MODELS = [
    ("cv_k3_sin_gru_bahdanau_additive",
     dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=8, enc_layers=2, dec_hidden=7, attn=4,
          encoder="conv", kernel=3, positions="sinusoidal"), 4031, 300),
    ("cv_k5_learned_lstm_luong_general",
     dict(cell="lstm", decoder="luong", score="general", enc_hidden=8, enc_layers=1, dec_hidden=7, attn=4,
          encoder="conv", kernel=5, positions="learned", max_positions=7), 4032, 300),
    ("cv_k3_relu_none_gru_bahdanau_additive",
     dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=8, enc_layers=2, dec_hidden=7, attn=4,
          encoder="conv", kernel=3, conv_relu=1, positions="none"), 4033, 300),
]

# (15)-(17) the transformer decoder (src/seq2seq/decoders/transformer.c, issue
# 27) over the transformer encoder: nn.TransformerDecoder of
# nn.TransformerDecoderLayer(emb, heads, dec_hidden, dropout=0,
# batch_first=True, norm_first=not post_norm) (final LayerNorm for pre-norm),
# positions added to the target embeddings, a causal tgt_mask and the source
# padding as memory_key_padding_mask; no bridge, no recurrent cell; the
# alignments are the top layer's cross-attention weights averaged over the
# heads. Only those: --only td_
TDEC_MODELS = [
    ("td_pre_sin_2layers",
     dict(cell="gru", decoder="transformer", score="additive", enc_hidden=10, enc_layers=2, dec_hidden=12, attn=4,
          encoder="transformer", heads=2, positions="sinusoidal", post_norm=0, dec_layers=2), 4041, 300),
    ("td_post_learned",
     dict(cell="gru", decoder="transformer", score="additive", enc_hidden=8, enc_layers=1, dec_hidden=9, attn=4,
          encoder="transformer", heads=3, positions="learned", post_norm=1, max_positions=8), 4042, 300),
    ("td_pre_none",
     dict(cell="gru", decoder="transformer", score="additive", enc_hidden=8, enc_layers=1, dec_hidden=10, attn=4,
          encoder="transformer", heads=1, positions="none", post_norm=0), 4043, 300),
]

CONFIG_FIELDS = ["cell", "decoder", "score", "src_vocab", "tgt_vocab", "emb", "enc_hidden", "enc_layers",
                 "dec_hidden", "attn", "max_batch", "max_src_len", "max_tgt_len"]

# The fixed batch (N = 3): unsorted, unequal source lengths (S = 6) and target lengths (T = 5).
BATCH_SRC_LEN = [4, 6, 2]
BATCH_TGT_LEN = [3, 1, 4]       # tokens; POINTER uses src_len pointers instead
GREEDY_SRC_LEN = [5, 3, 1, 6]   # M = 4 sources, S2 = 6
GREEDY_MAX_LEN = 8              # <= max_tgt_len + 1


# ---------------------------------------------------------------- the model

class AdditiveAttention(nn.Module):
    """e_j = vᵀ tanh(Wq q + Wk h_j + b)  (Bahdanau, "concat")."""

    def __init__(self, Hd, E, A):
        super().__init__()
        self.Wq = nn.Parameter(torch.empty(A, Hd))
        self.Wk = nn.Parameter(torch.empty(A, E))
        self.b = nn.Parameter(torch.empty(A))
        self.v = nn.Parameter(torch.empty(A))
        for p, fan_in in ((self.Wq, Hd), (self.Wk, E), (self.b, A), (self.v, A)):
            nn.init.uniform_(p, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))

    def keys(self, h):           # h [N,S,E] -> [N,S,A]
        return h @ self.Wk.t() + self.b

    def scores(self, q, kp):     # q [N,Hd], kp [N,S,A] -> [N,S]
        return torch.tanh(kp + (q @ self.Wq.t())[:, None, :]) @ self.v


class GeneralAttention(nn.Module):
    """e_j = qᵀ W h_j  (Luong "general"), W [Hd,E]."""

    def __init__(self, Hd, E):
        super().__init__()
        self.W = nn.Parameter(torch.empty(Hd, E))
        nn.init.uniform_(self.W, -1 / math.sqrt(E), 1 / math.sqrt(E))

    def keys(self, h):           # [N,S,E] -> [N,S,Hd]
        return h @ self.W.t()

    def scores(self, q, kp):
        return (kp @ q[:, :, None]).squeeze(-1)


class DotAttention(nn.Module):
    """e_j = scale · q·h_j (no parameters); scale 1/sqrt(E) for scaled_dot."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def keys(self, h):
        return h

    def scores(self, q, kp):
        return (kp @ q[:, :, None]).squeeze(-1) * self.scale


def sinusoid_table(S, D):
    """PE[j, 2i] = sin(j / 10000^(2i/D)), PE[j, 2i+1] = cos(same)."""
    pe = torch.zeros(S, D, dtype=torch.float64)
    for j in range(S):
        for d in range(D):
            angle = j / 10000.0 ** ((d - d % 2) / D)
            pe[j, d] = math.cos(angle) if d % 2 else math.sin(angle)
    return pe


def flat2(a):
    """A tensor as our files keep it: a 3-D Conv1d weight [O, I, k] as [O, I*k] (same memory order)."""
    return a.reshape(a.shape[0], -1) if a.ndim > 2 else a


class Seq2Seq(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        D, H, L, Hd, A = cfg["emb"], cfg["enc_hidden"], cfg["enc_layers"], cfg["dec_hidden"], cfg["attn"]
        E = 2 * H
        self.lstm = cfg["cell"] == "lstm"
        self.kind = cfg["decoder"]
        self.pointer = self.kind == "pointer"
        # registration order = our file order (layout_tensors)
        self.src_emb = nn.Embedding(cfg["src_vocab"], D, padding_idx=PAD)
        if not self.pointer:
            self.tgt_emb = nn.Embedding(cfg["tgt_vocab"], D, padding_idx=PAD)
        self.transformer = cfg.get("encoder") == "transformer"
        self.conv = cfg.get("encoder") == "conv"
        if self.conv:
            E = D
            self.encoder = nn.Module()
            self.positions = cfg.get("positions", "sinusoidal")
            if self.positions == "learned":
                self.encoder.register_parameter("pos_emb", nn.Parameter(
                    torch.empty(cfg["max_positions"], D).uniform_(-math.sqrt(3), math.sqrt(3))))
            self.relu = cfg.get("conv_relu", 0)
            C = D if self.relu else 2 * D
            self.encoder.convs = nn.ModuleList(
                [nn.Conv1d(D, C, cfg["kernel"], padding=cfg["kernel"] // 2) for _ in range(L)])
            self.register_buffer("pe", sinusoid_table(cfg["max_src_len"], D), persistent=False)
        elif self.transformer:
            E = D
            pre = not cfg.get("post_norm", 0)
            layer = nn.TransformerEncoderLayer(D, cfg["heads"], H, dropout=0.0, batch_first=True, norm_first=pre)
            self.encoder = nn.TransformerEncoder(layer, L, norm=nn.LayerNorm(D) if pre else None,
                                                 enable_nested_tensor=False)
            self.positions = cfg.get("positions", "sinusoidal")
            if self.positions == "learned":   # U(±sqrt 3): variance 1, as attend initialises it
                self.encoder.register_parameter("pos_emb", nn.Parameter(
                    torch.empty(cfg["max_positions"], D).uniform_(-math.sqrt(3), math.sqrt(3))))
            self.register_buffer("pe", sinusoid_table(cfg["max_src_len"], D), persistent=False)
        else:
            rnn = nn.LSTM if self.lstm else nn.GRU
            self.encoder = rnn(D, H, num_layers=L, batch_first=True, bidirectional=True)
        self.tdec = self.kind == "transformer"
        if self.tdec:
            self.build_transformer_decoder(cfg)
            return
        self.bridge = nn.Linear(E, Hd)
        if self.kind != "none":
            score = cfg["score"]
            if score == "additive":
                self.attention = AdditiveAttention(Hd, E, A)
            elif score == "general":
                self.attention = GeneralAttention(Hd, E)
            elif score == "dot":
                self.attention = DotAttention(1.0)
            else:
                self.attention = DotAttention(1.0 / math.sqrt(E))
        Din = {"bahdanau": D + E, "none": D + E, "luong": D + Hd, "pointer": D}[self.kind]
        cell = nn.LSTMCell if self.lstm else nn.GRUCell
        self.decoder = cell(Din, Hd)
        # a stacked decoder: layer l > 0 is a cell on layer l-1's new state;
        # its parameters are registered on self.decoder as <name>_l<l> (the
        # cells themselves are kept out of the module tree)
        self.dec_layers = max(1, cfg.get("dec_layers", 0))
        self.upper = []
        for l in range(1, self.dec_layers):
            up = cell(Hd, Hd)
            for pn in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                self.decoder.register_parameter("%s_l%d" % (pn, l), getattr(up, pn))
            self.upper.append(up)
        if self.kind == "luong":
            self.combine = nn.Linear(E + Hd, Hd, bias=False)
        if not self.pointer:
            Fw = Hd if self.kind == "luong" else Hd + E
            self.out = nn.Linear(Fw, cfg["tgt_vocab"])

    def build_transformer_decoder(self, cfg):
        D, pre = cfg["emb"], not cfg.get("post_norm", 0)
        layer = nn.TransformerDecoderLayer(D, cfg["heads"], cfg["dec_hidden"], dropout=0.0, batch_first=True,
                                           norm_first=pre)
        self.decoder = nn.TransformerDecoder(layer, max(1, cfg.get("dec_layers", 0)),
                                             norm=nn.LayerNorm(D) if pre else None)
        if self.positions == "learned":   # registered on the module itself: first in its state_dict
            self.decoder.register_parameter("pos_emb", nn.Parameter(
                torch.empty(cfg["max_positions"], D).uniform_(-math.sqrt(3), math.sqrt(3))))
        self.register_buffer("pe_dec", sinusoid_table(cfg["max_tgt_len"] + 1, D), persistent=False)
        self.out = nn.Linear(D, cfg["tgt_vocab"])

    def tdec_run(self, tgt_in, ctx, weights=True):
        """The transformer decoder over the steps tgt_in [N,T] at once (causal
        mask): logits [N,T,V] and the top layer's cross-attention weights
        averaged over the heads [N,T,S] (or None)."""
        N, T = tgt_in.shape
        x = self.tgt_emb(tgt_in)
        if self.positions == "sinusoidal":
            x = x + self.pe_dec[:T].to(x.dtype)
        elif self.positions == "learned":
            x = x + self.decoder.pos_emb[:T]
        mask = torch.triu(torch.full((T, T), float("-inf"), dtype=x.dtype), diagonal=1)
        pad = ~ctx["valid"]
        cap = {}

        def hook(mod, inp, outp):   # the same call again, asking for the weights
            if cap.get("busy"):
                return
            cap["busy"] = True
            cap["w"] = mod(inp[0], inp[1], inp[2], key_padding_mask=pad, need_weights=True,
                           average_attn_weights=True)[1]
            cap["busy"] = False

        h = self.decoder.layers[-1].multihead_attn.register_forward_hook(hook) if weights else None
        y = self.decoder(x, ctx["enc"], tgt_mask=mask, memory_key_padding_mask=pad)
        if h is not None:
            h.remove()
        return self.out(y), cap.get("w")

    # encoder: source embedding -> bidirectional RNN -> bridge
    def encode(self, src, src_len):
        N, S = src.shape
        x = self.src_emb(src)                                            # [N,S,D]
        if self.transformer:
            return self.encode_transformer(src, src_len, x)
        if self.conv:
            return self.encode_conv(src, src_len, x)
        packed = pack_padded_sequence(x, src_len, batch_first=True, enforce_sorted=False)
        out, hn = self.encoder(packed)
        if self.lstm:
            hn = hn[0]                                                   # h_n; the cell states are unused
        enc, _ = pad_packed_sequence(out, batch_first=True, total_length=S)  # [N,S,E], zeros at padding
        fin = torch.cat([hn[-2], hn[-1]], dim=-1)                        # top layer [h_fwd; h_bwd] [N,E]
        valid = torch.arange(S)[None, :] < src_len[:, None]              # [N,S]
        return self.decoder_start(src, enc, fin, valid)

    def encode_transformer(self, src, src_len, x):
        N, S = src.shape
        if self.positions == "sinusoidal":
            x = x + self.pe[:S].to(x.dtype)
        elif self.positions == "learned":
            x = x + self.encoder.pos_emb[:S]
        valid = torch.arange(S)[None, :] < src_len[:, None]              # [N,S]
        out = self.encoder(x, src_key_padding_mask=~valid)               # training mode: the plain path
        enc = out * valid[:, :, None]                                    # padding rows 0
        fin = enc.sum(1) / src_len[:, None].to(enc.dtype)                # mean of the valid states [N,E]
        return self.decoder_start(src, enc, fin, valid)

    def encode_conv(self, src, src_len, x):
        N, S = src.shape
        if self.positions == "sinusoidal":
            x = x + self.pe[:S].to(x.dtype)
        elif self.positions == "learned":
            x = x + self.encoder.pos_emb[:S]
        valid = torch.arange(S)[None, :] < src_len[:, None]              # [N,S]
        for conv in self.encoder.convs:
            z = conv((x * valid[:, :, None]).transpose(1, 2)).transpose(1, 2)  # [N,S,2D], padding zeroed first
            x = (x + (F.relu(z) if self.relu else F.glu(z, dim=-1))) * math.sqrt(0.5)
        enc = x * valid[:, :, None]
        fin = enc.sum(1) / src_len[:, None].to(enc.dtype)
        return self.decoder_start(src, enc, fin, valid)

    def decoder_start(self, src, enc, fin, valid):
        if self.tdec:
            return {}, {"src": src, "enc": enc, "fin": fin, "valid": valid}
        s0 = torch.tanh(self.bridge(fin))                                # [N,Hd]
        st = {"s": s0}
        if self.lstm:
            st["c"] = torch.zeros_like(s0)                               # decoder cell state starts at zero
        if self.dec_layers > 1:                                          # every layer starts from s_0 (c 0)
            st["hs"] = [s0] * self.dec_layers
            if self.lstm:
                st["cs"] = [torch.zeros_like(s0)] * self.dec_layers
        if self.kind == "luong":
            st["ht"] = torch.zeros_like(s0)                              # h̃_0 = 0
        ctx = {"src": src, "enc": enc, "fin": fin, "valid": valid,
               "kp": self.attention.keys(enc) if self.kind != "none" else None}
        return st, ctx

    def attend(self, q, ctx):
        """masked scores -> (weights [N,S] or log-probs, context [N,E])."""
        e = self.attention.scores(q, ctx["kp"]).masked_fill(~ctx["valid"], float("-inf"))
        if self.pointer:
            return F.log_softmax(e, dim=-1), None
        w = torch.softmax(e, dim=-1)
        return w, torch.bmm(w[:, None, :], ctx["enc"]).squeeze(1)

    def cell(self, x, st):
        if self.dec_layers > 1:                                          # layer l's input: layer l-1's new state
            hs, cs, inp = [], [], x
            for l, c in enumerate([self.decoder] + self.upper):
                if self.lstm:
                    h, cc = c(inp, (st["hs"][l], st["cs"][l]))
                    cs.append(cc)
                else:
                    h = c(inp, st["hs"][l])
                hs.append(h)
                inp = h
            new = {"s": hs[-1], "hs": hs}                                # "s": the top layer's state
            if self.lstm:
                new["c"], new["cs"] = cs[-1], cs
            return new
        if self.lstm:
            s, c = self.decoder(x, (st["s"], st["c"]))
            return {"s": s, "c": c}
        return {"s": self.decoder(x, st["s"])}

    def step(self, y_prev, st, ctx):
        """One decoder step from the previous tokens (POINTER: positions, -1 =
        start). Returns (logits [N,V] or log-probs [N,S], new state, weights
        [N,S] or None)."""
        if self.pointer:
            ids = ctx["src"].gather(1, y_prev.clamp(min=0)[:, None]).squeeze(1)
            x = self.src_emb(torch.where(y_prev >= 0, ids, torch.full_like(ids, BOS)))
        else:
            x = self.tgt_emb(y_prev)                                     # [N,D]
        if self.kind in ("bahdanau", "none"):
            if self.kind == "bahdanau":
                w, c = self.attend(st["s"], ctx)                         # query s_{t-1}
            else:
                w, c = None, ctx["fin"]
            new = self.cell(torch.cat([x, c], dim=-1), st)               # s_t = cell([E(y); c_t], s_{t-1})
            return self.out(torch.cat([new["s"], c], dim=-1)), new, w    # W_o [s_t; c_t] + b_o
        if self.kind == "luong":
            new = self.cell(torch.cat([x, st["ht"]], dim=-1), st)        # input feeding
            w, c = self.attend(new["s"], ctx)                            # query s_t
            new["ht"] = torch.tanh(self.combine(torch.cat([c, new["s"]], dim=-1)))  # h̃_t = tanh(W_c [c_t; s_t])
            return self.out(new["ht"]), new, w
        new = self.cell(x, st)                                           # pointer
        logp, _ = self.attend(new["s"], ctx)
        return logp, new, logp.exp()

    def forward(self, src, src_len, tgt_in, tgt_out):
        """Teacher-forced mean loss, and the per-step outputs and weights."""
        st, ctx = self.encode(src, src_len)
        if self.tdec:
            out, w = self.tdec_run(tgt_in, ctx, weights=not torch.is_grad_enabled() or self.want_weights)
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)
            return loss, out, [None if w is None else w[:, t] for t in range(tgt_in.shape[1])]
        outs, ws = [], []
        for t in range(tgt_in.shape[1]):
            o, st, w = self.step(tgt_in[:, t], st, ctx)
            outs.append(o)
            ws.append(w)
        out = torch.stack(outs, dim=1)                                   # [N,T,V] or [N,T,S]
        if self.pointer:
            loss = F.nll_loss(out.reshape(-1, out.shape[-1]), tgt_out.reshape(-1), ignore_index=-1)
        else:
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD)
        return loss, out, ws

    @torch.no_grad()
    def greedy(self, src, src_len, max_len):
        """One source at a time (rows are independent): argmax each step,
        stop at EOS (not emitted) or after max_len tokens; POINTER emits
        exactly src_len positions, each an argmax over the valid ones."""
        M, S2 = src.shape
        out = torch.full((M, max_len), PAD, dtype=torch.long)
        out_len = torch.zeros(M, dtype=torch.long)
        align = torch.zeros(M, max_len, S2, dtype=torch.float64)
        gaps = []
        for n in range(M):
            L = int(src_len[n])
            st, ctx = self.encode(src[n:n + 1, :L], src_len[n:n + 1])
            y = torch.tensor([-1 if self.pointer else BOS])
            steps = L if self.pointer else max_len
            k = steps
            ys = [BOS]
            for t in range(steps):
                if self.tdec:   # the whole prefix again (no cache: the reference)
                    logits, w = self.tdec_run(torch.tensor([ys]), ctx)
                    o, w = logits[:, -1], w[:, -1]
                else:
                    o, st, w = self.step(y, st, ctx)
                row = o[0]
                if row.numel() >= 2:   # a one-position pointer has no choice to make
                    top2 = torch.topk(row, 2).values
                    gaps.append(float(top2[0] - top2[1]))
                best = int(torch.argmax(row))
                if not self.pointer and best == EOS:
                    k = t
                    break
                out[n, t] = best
                ys.append(best)
                if w is not None:
                    align[n, t, :L] = w[0]
                y = torch.tensor([best])
            out_len[n] = k
        return out, out_len, align, min(gaps)


# ------------------------------------------------------------- data, training

def symbols_batch(rng, lengths, nsym):
    """Random source ids (4 .. 4+nsym-1), PAD after each length: [N,S]."""
    S = max(lengths)
    src = np.zeros((len(lengths), S), dtype=np.int64)
    for n, L in enumerate(lengths):
        src[n, :L] = rng.integers(4, 4 + nsym, size=L)
    return src


def make_targets(src, src_len, tgt_tokens, pointer):
    """The attend_batch target arrays (attend_batch_fill's rules) from target
    sequences tgt_tokens (list of lists)."""
    N = len(tgt_tokens)
    if pointer:
        T = max(len(y) for y in tgt_tokens)
        tin = np.full((N, T), -1, dtype=np.int64)
        tout = np.full((N, T), -1, dtype=np.int64)
        for n, y in enumerate(tgt_tokens):
            tin[n, 1:len(y)] = y[:-1]
            tout[n, :len(y)] = y
        tlen = np.array([len(y) for y in tgt_tokens], dtype=np.int64)
    else:
        T = max(len(y) for y in tgt_tokens) + 1
        tin = np.full((N, T), PAD, dtype=np.int64)
        tout = np.full((N, T), PAD, dtype=np.int64)
        for n, y in enumerate(tgt_tokens):
            tin[n, 0] = BOS
            tin[n, 1:len(y) + 1] = y
            tout[n, :len(y)] = y
            tout[n, len(y)] = EOS
        tlen = np.array([len(y) + 1 for y in tgt_tokens], dtype=np.int64)
    return tin, tout, tlen


def task_targets(src, src_len, pointer):
    """reverse (token decoders: a..f -> A..F reversed) or sort (pointer:
    positions in ascending order of their symbols, stable)."""
    ys = []
    for n, L in enumerate(src_len):
        row = [int(v) for v in src[n, :L]]
        if pointer:
            ys.append(sorted(range(L), key=lambda j: (row[j], j)))
        else:
            ys.append(row[::-1])   # source id k maps to target id k (a -> A, ...)
    return ys


def train(model, rng, steps):
    """Adam in float64 on random task batches (lengths 1..6)."""
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    pointer = model.pointer
    for _ in range(steps):
        lengths = [int(v) for v in rng.integers(1, 7, size=16)]
        src = symbols_batch(rng, lengths, len(SRC_SYMBOLS))
        tin, tout, _ = make_targets(src, lengths, task_targets(src, lengths, pointer), pointer)
        opt.zero_grad()
        loss, _, _ = model(torch.from_numpy(src), torch.tensor(lengths), torch.from_numpy(tin),
                           torch.from_numpy(tout))
        loss.backward()
        opt.step()
    with torch.no_grad():   # round to float32: the weights the C library sees exactly
        for p in model.parameters():
            p.copy_(p.float().double())


# ----------------------------------------------------------------- writing

def safetensors_bytes(tensors, metadata, metadata_first=True):
    """tensors: list of (name, float32 numpy array); metadata: dict of str.
    With metadata_first the header is laid out as attend_st_write lays it out
    (docs/FORMAT.md), so the file is byte-identical to attend_model_save's."""
    header, blobs, off = {}, [], 0
    if metadata_first:
        header["__metadata__"] = metadata
    for name, a in tensors:
        b = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if not metadata_first:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def config_fields(cfg):
    """The keys of attend.config in attend_model_config_to_json's order (the
    later fields only when set: positions when not sinusoidal)."""
    keys = CONFIG_FIELDS + (["dec_layers"] if cfg.get("dec_layers", 0) else [])
    if cfg.get("encoder", "rnn") == "transformer":
        keys += ["encoder", "heads"] + (["positions"] if cfg.get("positions", "sinusoidal") != "sinusoidal" else [])
        keys += ["post_norm"] if cfg.get("post_norm", 0) else []
        keys += ["max_positions"] if cfg.get("max_positions", 0) else []
    elif cfg.get("encoder", "rnn") == "conv":
        keys += ["encoder", "kernel"] + (["conv_relu"] if cfg.get("conv_relu", 0) else [])
        keys += ["positions"] if cfg.get("positions", "sinusoidal") != "sinusoidal" else []
        keys += ["max_positions"] if cfg.get("max_positions", 0) else []
    return keys


def file_metadata(cfg):
    pointer = cfg["decoder"] == "pointer"
    return {
        "attend.format": "model",
        "attend.config": json.dumps({k: cfg[k] for k in config_fields(cfg)}, separators=(",", ":")),
        "attend.tokenizer": "char",
        "attend.src_vocab": json.dumps(SPECIALS + SRC_SYMBOLS, separators=(",", ":")),
        "attend.tgt_vocab": "[]" if pointer else json.dumps(SPECIALS + TGT_SYMBOLS, separators=(",", ":")),
    }


def fmt_tensor(name, a, integer=False):
    a = np.asarray(a)
    lines = ["%s %d %s" % (name, a.ndim, " ".join(str(d) for d in a.shape))]
    for row in a.reshape(-1, a.shape[-1]):
        lines.append(" ".join(("%d" % v) if integer else ("%.12g" % v) for v in row))
    return "\n".join(lines) + "\n"


def expected_names(cfg):
    """Our layout_tensors() order, written out independently of the model."""
    names = ["src_emb.weight"] + ([] if cfg["decoder"] == "pointer" else ["tgt_emb.weight"])
    if cfg.get("encoder", "rnn") == "conv":
        names += ["encoder.pos_emb"] if cfg.get("positions") == "learned" else []
        for l in range(cfg["enc_layers"]):
            names += ["encoder.convs.%d.weight" % l, "encoder.convs.%d.bias" % l]
    elif cfg.get("encoder", "rnn") == "transformer":
        names += ["encoder.pos_emb"] if cfg.get("positions") == "learned" else []
        for l in range(cfg["enc_layers"]):
            names += ["encoder.layers.%d.%s" % (l, p) for p in (
                "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias")]
        names += [] if cfg.get("post_norm", 0) else ["encoder.norm.weight", "encoder.norm.bias"]
    else:
        for l in range(cfg["enc_layers"]):
            for sfx in ("", "_reverse"):
                names += ["encoder.%s_l%d%s" % (p, l, sfx) for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    if cfg["decoder"] == "transformer":
        names += ["decoder.pos_emb"] if cfg.get("positions") == "learned" else []
        for l in range(max(1, cfg.get("dec_layers", 0))):
            names += ["decoder.layers.%d.%s" % (l, p) for p in (
                "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight", "linear1.bias",
                "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
                "norm3.weight", "norm3.bias")]
        names += [] if cfg.get("post_norm", 0) else ["decoder.norm.weight", "decoder.norm.bias"]
        return names + ["out.weight", "out.bias"]
    names += ["bridge.weight", "bridge.bias"]
    if cfg["decoder"] != "none":
        names += {"general": ["attention.W"], "additive": ["attention.Wq", "attention.Wk", "attention.b",
                                                           "attention.v"]}.get(cfg["score"], [])
    names += ["decoder.weight_ih", "decoder.weight_hh", "decoder.bias_ih", "decoder.bias_hh"]
    for l in range(1, max(1, cfg.get("dec_layers", 0))):
        names += ["decoder.%s_l%d" % (p, l) for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    if cfg["decoder"] == "luong":
        names.append("combine.weight")
    if cfg["decoder"] != "pointer":
        names += ["out.weight", "out.bias"]
    return names


def make(name, arch, seed, steps):
    cfg = dict(COMMON, **arch)
    pointer = cfg["decoder"] == "pointer"
    if pointer:
        cfg["tgt_vocab"] = 0   # ignored by POINTER; no target vocabulary in the file
    torch.manual_seed(seed)
    model = Seq2Seq(cfg)                      # float32, PyTorch's default initialisation
    model.double()
    rng = np.random.default_rng(seed)
    model.want_weights = False
    train(model, rng, steps)
    model.want_weights = True
    params = list(model.named_parameters())
    assert [n for n, _ in params] == expected_names(cfg), [n for n, _ in params]
    assert torch.all(model.src_emb.weight[PAD] == 0)

    tensors = [(n, flat2(p.detach().numpy()).astype(np.float32)) for n, p in params]
    for (_, a), (_, p) in zip(tensors, params):
        assert np.array_equal(a.astype(np.float64), flat2(p.detach().numpy()))   # exactly float32
    st_bytes = safetensors_bytes(tensors, file_metadata(cfg))

    # the fixed batch: random targets (not the task's), so the loss is far from 0
    src = symbols_batch(rng, BATCH_SRC_LEN, len(SRC_SYMBOLS))
    if pointer:
        ys = [[int(v) for v in rng.integers(0, L, size=L)] for L in BATCH_SRC_LEN]
    else:
        ys = [[int(v) for v in rng.integers(4, 4 + len(TGT_SYMBOLS), size=L)] for L in BATCH_TGT_LEN]
    tin, tout, tlen = make_targets(src, BATCH_SRC_LEN, ys, pointer)
    src_len = torch.tensor(BATCH_SRC_LEN)
    model.zero_grad()
    loss, out, ws = model(torch.from_numpy(src), src_len, torch.from_numpy(tin), torch.from_numpy(tout))
    loss.backward()

    # teacher-forcing statistics over counted steps (t < tgt_len)
    tokens = correct = seqs_ok = 0
    entropy, tf_gap = 0.0, float("inf")
    for n in range(src.shape[0]):
        ok = True
        for t in range(int(tlen[n])):
            row = out[n, t].detach()
            top2 = torch.topk(row, 2).values
            tf_gap = min(tf_gap, float(top2[0] - top2[1]))
            good = int(torch.argmax(row)) == int(tout[n, t])
            tokens += 1
            correct += good
            ok &= good
            if ws[t] is not None:
                w = ws[t][n].detach()
                w = w[w > 0]
                entropy -= float((w * w.log()).sum())
        seqs_ok += ok
    ent = entropy / tokens if cfg["decoder"] != "none" else 0.0

    gsrc = symbols_batch(rng, GREEDY_SRC_LEN, len(SRC_SYMBOLS))
    gout, glen, galign, g_gap = model.greedy(torch.from_numpy(gsrc), torch.tensor(GREEDY_SRC_LEN), GREEDY_MAX_LEN)
    assert tf_gap > MIN_GAP and g_gap > MIN_GAP, (name, tf_gap, g_gap)

    parts = [
        "# model reference: %s; tools/ref_model.py (torch %s, float64 from float32 weights)\n"
        % (name, torch.__version__.split("+")[0]),
        "# config %s\n" % json.dumps({k: cfg[k] for k in config_fields(cfg)}, separators=(",", ":")),
        "# torch seed %d, %d Adam steps (lr 0.02) on the %s task before rounding to float32\n"
        % (seed, steps, "sort" if pointer else "reverse"),
        "# smallest argmax gap: teacher-forced %.3g, greedy %.3g\n" % (tf_gap, g_gap),
    ]
    parts.append(fmt_tensor("src", src, True))
    parts.append(fmt_tensor("src_len", np.array(BATCH_SRC_LEN), True))
    parts.append(fmt_tensor("tgt_in", tin, True))
    parts.append(fmt_tensor("tgt_out", tout, True))
    parts.append(fmt_tensor("tgt_len", tlen, True))
    parts.append(fmt_tensor("loss", np.array([loss.item()])))
    parts.append(fmt_tensor("tokens", np.array([tokens]), True))
    parts.append(fmt_tensor("correct_tokens", np.array([correct]), True))
    parts.append(fmt_tensor("correct_seqs", np.array([seqs_ok]), True))
    parts.append(fmt_tensor("attn_entropy", np.array([ent])))
    for n, p in params:
        parts.append(fmt_tensor("grad." + n, flat2(p.grad.numpy())))
    parts.append(fmt_tensor("greedy_src", gsrc, True))
    parts.append(fmt_tensor("greedy_src_len", np.array(GREEDY_SRC_LEN), True))
    parts.append(fmt_tensor("greedy_max_len", np.array([GREEDY_MAX_LEN]), True))
    parts.append(fmt_tensor("greedy_out", gout.numpy(), True))
    parts.append(fmt_tensor("greedy_out_len", glen.numpy(), True))
    parts.append(fmt_tensor("greedy_align", galign.numpy()))
    summary = "%s: loss %.6f, %d/%d tokens right, greedy lengths %s" % (
        name, loss.item(), correct, tokens, glen.tolist())
    return cfg, tensors, st_bytes, "".join(parts), summary


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    print("wrote %s (%d bytes)" % (os.path.relpath(path), len(data)))


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    first = first_tf = first_cv = first_td = None
    for name, arch, seed, steps in MODELS + DEC_LAYER_MODELS + TRANSFORMER_MODELS + CONV_MODELS + TDEC_MODELS:
        if only is not None and not name.startswith(only):
            continue
        cfg, tensors, st_bytes, text, summary = make(name, arch, seed, steps)
        write(os.path.join(OUT_DIR, "model_%s.safetensors" % name), st_bytes)
        write(os.path.join(OUT_DIR, "model_%s.txt" % name), text.encode("utf-8"))
        print("  " + summary)
        if first is None:
            first = (cfg, tensors)
        if first_tf is None and name.startswith("tf_"):
            first_tf = (cfg, tensors)
        if first_cv is None and name.startswith("cv_"):
            first_cv = (cfg, tensors)
        if first_td is None and name.startswith("td_"):
            first_td = (cfg, tensors)
    if first_td is not None:
        # the first transformer decoder's tensors without a cross-attention
        # tensor, and under a feed-forward one wider: refused naming the tensor
        cfg, tensors = first_td
        write(os.path.join(OUT_DIR, "model_td_missing.safetensors"),
              safetensors_bytes([(n, a) for n, a in tensors if n != "decoder.layers.1.multihead_attn.in_proj_weight"],
                                file_metadata(cfg)))
        write(os.path.join(OUT_DIR, "model_td_bad_ffn.safetensors"),
              safetensors_bytes(tensors, file_metadata(dict(cfg, dec_hidden=cfg["dec_hidden"] + 1))))
    if first_cv is not None:
        # the first conv model's tensors under a configuration whose kernel is 2 wider
        cfg, tensors = first_cv
        write(os.path.join(OUT_DIR, "model_cv_bad_kernel.safetensors"),
              safetensors_bytes(tensors, file_metadata(dict(cfg, kernel=cfg["kernel"] + 2))))
    if first_tf is not None:
        # the first transformer model's tensors without one layer tensor, and
        # under a configuration whose feed-forward is one wider: the loader
        # must refuse both naming the tensor
        cfg, tensors = first_tf
        write(os.path.join(OUT_DIR, "model_tf_missing.safetensors"),
              safetensors_bytes([(n, a) for n, a in tensors if n != "encoder.layers.1.linear2.weight"],
                                file_metadata(cfg)))
        write(os.path.join(OUT_DIR, "model_tf_bad_ffn.safetensors"),
              safetensors_bytes(tensors, file_metadata(dict(cfg, enc_hidden=cfg["enc_hidden"] + 1))))
    if only is not None:
        return
    # config wider than the tensors: dec_hidden + 1 makes bridge.weight the
    # first misshapen tensor ([Hd,E] in the file, [Hd+1,E] expected)
    cfg, tensors = first
    bad = dict(cfg, dec_hidden=cfg["dec_hidden"] + 1)
    # (__metadata__ last here: the reader accepts it anywhere)
    write(os.path.join(OUT_DIR, "model_bad_width.safetensors"),
          safetensors_bytes(tensors, file_metadata(bad), metadata_first=False))


if __name__ == "__main__":
    main()
