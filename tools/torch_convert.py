#!/usr/bin/python3
"""torch_convert.py — PyTorch <-> attend model files, both ways.

    /usr/bin/python3 tools/torch_convert.py to-attend MODEL.pt MODEL.safetensors
    /usr/bin/python3 tools/torch_convert.py to-torch MODEL.safetensors MODEL.pt
    /usr/bin/python3 tools/torch_convert.py to-torch --dequantize Q.safetensors MODEL.pt

(Debian's interpreter: it has torch and numpy; the attend library is not
needed.) The PyTorch side is the reference model of tools/ref_model.py
(Seq2Seq): its state_dict names and shapes are the tensor names of an attend
model file (docs/FORMAT.md, "Model tensors"), in the same order. MODEL.pt is
what torch.save wrote for a dict

    {"config": {"cell": "gru", "decoder": "bahdanau", "score": "additive",
                "src_vocab": 10, "tgt_vocab": 11, "emb": 6, "enc_hidden": 5,
                "enc_layers": 1, "dec_hidden": 7, "attn": 4, "max_batch": 4,
                "max_src_len": 6, "max_tgt_len": 7},     # attend_model_config
     "state_dict": model.state_dict(),                   # a ref_model.Seq2Seq
     "src_vocab": ["<pad>", "<bos>", "<eos>", "<unk>", "a", ...],
     "tgt_vocab": [...],                                 # [] for a pointer model
     "tokenizer": "char"}                                # or "space"

(to-torch writes the same dict). A plain state_dict is accepted too, with
--meta META.json holding the other four keys. to-attend checks the state_dict
by loading it strictly into ref_model.Seq2Seq(config) (every name, every
shape), and writes the file as attend_model_save lays it out, so attend
loads it and saves it again byte for byte. Weights are stored as float32.
Quantized files (`attend quantize --to int8|f16`: the weight matrices stored
I8 with per-row scales, or F16; docs/FORMAT.md) are refused by to-torch, naming
the first such tensor, unless --dequantize is given: then each matrix is
written as the float32 values attend computes with (int8: q * scale per row;
f16: the half values widened), the .scale tensors dropped. The result is a
float model: converting it back with to-attend gives a float32 file, not the
quantized one (quantize it again with `attend quantize`).
A stacked decoder ("dec_layers": N > 1 in the config) has layer l > 0's
parameters as decoder.weight_ih_l<l> ... in the state_dict, as Seq2Seq
registers them.
The transformer and conv encoders and the transformer decoder (issue 27;
config "encoder": "transformer" | "conv", "decoder": "transformer", with
heads, positions, post_norm, max_positions, kernel, conv_relu) are Seq2Seq's
nn.TransformerEncoder / nn.Conv1d layers / nn.TransformerDecoder, their
state_dict names the file's (encoder.layers.<l>.self_attn.in_proj_weight,
decoder.layers.<l>.multihead_attn.*, encoder.pos_emb for learned positions,
...). The one difference in shape: a conv layer's nn.Conv1d weight
[2 emb, emb, kernel] (GLU; emb for ReLU) is stored as [2 emb, emb*kernel], the
same values in the same order; the tool reshapes both ways.

Example (python/tests/test_torch_convert.py does this and compares the
log-probabilities and alignments of both sides):

    import torch, sys; sys.path.insert(0, "tools"); import ref_model
    cfg = dict(cell="gru", decoder="bahdanau", score="additive", src_vocab=10,
               tgt_vocab=10, emb=8, enc_hidden=8, enc_layers=1, dec_hidden=16,
               attn=8, max_batch=8, max_src_len=8, max_tgt_len=8)
    m = ref_model.Seq2Seq(cfg)            # ... trained in PyTorch
    voc = ["<pad>", "<bos>", "<eos>", "<unk>"] + list("abcdef")
    torch.save({"config": cfg, "state_dict": m.state_dict(), "src_vocab": voc,
                "tgt_vocab": voc, "tokenizer": "char"}, "m.pt")
    # /usr/bin/python3 tools/torch_convert.py to-attend m.pt m.safetensors
    # attend decode m.safetensors   (or attend.Model.load("m.safetensors"))
"""
import argparse
import collections
import json
import os
import re
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_model  # noqa: E402

CONFIG_FIELDS = ref_model.CONFIG_FIELDS
SPECIALS = ref_model.SPECIALS
META_KEYS = ("config", "src_vocab", "tgt_vocab", "tokenizer")


# the conv encoder's weights: nn.Conv1d [out, in, k] in PyTorch, [out, in*k] in the file
CONV_WEIGHT = re.compile(r"^encoder\.convs\.\d+\.weight$")


class ConvertError(Exception):
    pass


def _json(x):
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def check_bundle(b):
    """Validates a {"config", "state_dict", "src_vocab", "tgt_vocab",
    "tokenizer"} dict; returns the state_dict in file order (float32 numpy)."""
    for k in META_KEYS + ("state_dict",):
        if k not in b:
            raise ConvertError("missing %r (keys: %s)" % (k, ", ".join(sorted(b))))
    cfg = b["config"]
    missing = [f for f in CONFIG_FIELDS if f not in cfg]
    if missing:
        raise ConvertError("config lacks %s" % ", ".join(missing))
    pointer = cfg["decoder"] == "pointer"
    if b["tokenizer"] not in ("char", "space"):
        raise ConvertError("tokenizer %r: expected char or space" % b["tokenizer"])
    for side in ("src", "tgt"):
        v = b[side + "_vocab"]
        if side == "tgt" and pointer:
            if v:
                raise ConvertError("a pointer model has no target vocabulary (tgt_vocab must be [])")
            continue
        if list(v[:4]) != SPECIALS:
            raise ConvertError("%s_vocab must start with %s" % (side, SPECIALS))
        if len(v) != cfg[side + "_vocab"]:
            raise ConvertError("%s_vocab has %d tokens, config says %d" % (side, len(v), cfg[side + "_vocab"]))
    model = ref_model.Seq2Seq(cfg)
    try:
        model.load_state_dict(b["state_dict"], strict=True)
    except RuntimeError as e:
        raise ConvertError("the state_dict does not fit the config: %s" % e)
    names = ref_model.expected_names(cfg)
    sd = b["state_dict"]
    out = collections.OrderedDict((n, sd[n].detach().cpu().to(torch.float32).contiguous().numpy()) for n in names)
    for n in out:           # nn.Conv1d's [out, in, k] is stored as [out, in*k] (the same memory order)
        if CONV_WEIGHT.match(n):
            out[n] = out[n].reshape(out[n].shape[0], -1)
    return out


def to_attend(src, dst, meta=None):
    b = torch.load(src, map_location="cpu", weights_only=True)  # tensors, dicts, lists, strings: no code
    if "state_dict" not in b:      # a plain state_dict
        if meta is None:
            raise ConvertError("%s is a plain state_dict: give --meta META.json with %s" % (src, ", ".join(META_KEYS)))
        with open(meta, encoding="utf-8") as f:
            b = dict(json.load(f), state_dict=b)
    tensors = check_bundle(b)
    cfg = b["config"]
    metadata = collections.OrderedDict([
        ("attend.format", "model"),
        ("attend.config", _json({k: cfg[k] for k in ref_model.config_fields(cfg)})),
        ("attend.tokenizer", b["tokenizer"]),
        ("attend.src_vocab", _json(list(b["src_vocab"]))),
        ("attend.tgt_vocab", _json(list(b["tgt_vocab"]))),
    ])
    data = safetensors_bytes(list(tensors.items()), metadata)
    _write_atomic(dst, lambda f: f.write(data))


def _write_atomic(dst, write):
    """Writes dst through a temporary beside it and a rename, so a failure
    part-way leaves dst as it was and no temporary behind."""
    tmp = dst + ".tmp.%d" % os.getpid()
    try:
        with open(tmp, "wb") as f:
            write(f)
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def safetensors_bytes(tensors, metadata):
    """The layout attend_st_write writes (docs/FORMAT.md): metadata first,
    tensors in order, compact JSON padded with spaces to a multiple of 8."""
    header, blobs, off = collections.OrderedDict([("__metadata__", metadata)]), [], 0
    for name, a in tensors:
        raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = _json(header).encode("utf-8")
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def read_attend(path, dequantize=False):
    """(metadata dict, OrderedDict name -> float32 array) of a model file;
    I8/F16 weight matrices are refused, or widened to float32 with dequantize."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ConvertError("%s: %d bytes, too short for safetensors" % (path, len(data)))
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ConvertError("%s: header of %d bytes, the file has %d" % (path, n, len(data) - 8))
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=collections.OrderedDict)
    except ValueError as e:
        raise ConvertError("%s: header is not JSON: %s" % (path, e))
    meta = header.pop("__metadata__", {})
    if meta.get("attend.format") not in ("model", "checkpoint"):
        raise ConvertError("%s: not an attend model file (attend.format = %r)" % (path, meta.get("attend.format")))
    body = data[8 + n:]
    tensors = collections.OrderedDict()
    for name, t in header.items():
        if name.startswith("optim."):
            continue                      # a checkpoint's optimizer moments
        dtype = {"F32": "<f4", "F16": "<f2", "I8": "i1"}.get(t["dtype"])
        if dtype is None or (dtype != "<f4" and not dequantize):
            raise ConvertError("%s: tensor %s is %s, expected F32%s" % (
                path, name, t["dtype"], ": the file is quantized (attend quantize); --dequantize writes the float32 "
                "values attend computes with" if dtype else ""))
        a, b = t["data_offsets"]
        if not 0 <= a <= b <= len(body):
            raise ConvertError("%s: tensor %s: data_offsets %s outside the file" % (path, name, t["data_offsets"]))
        tensors[name] = np.frombuffer(body[a:b], dtype=dtype).reshape(t["shape"]).copy()
    if dequantize:
        for name in list(tensors):          # int8: W = q * scale per row, the .scale tensors dropped
            if name.endswith(".scale") and name[:-6] in tensors and tensors[name[:-6]].dtype == np.int8:
                q = tensors[name[:-6]]
                tensors[name[:-6]] = q.astype(np.float32) * tensors.pop(name).astype(np.float32)[:, None]
        for name, a in tensors.items():     # f16: widened
            if a.dtype == np.float16:
                tensors[name] = a.astype(np.float32)
        for name, a in tensors.items():
            if a.dtype != np.float32:
                raise ConvertError("%s: tensor %s is I8 without its scales %s.scale" % (path, name, name))
    return meta, tensors


def to_torch(src, dst, dequantize=False):
    meta, tensors = read_attend(src, dequantize)
    cfg = json.loads(meta["attend.config"], object_pairs_hook=collections.OrderedDict)
    for n, a in tensors.items():    # the conv encoder's [out, in*k] back to nn.Conv1d's [out, in, k]
        if CONV_WEIGHT.match(n) and a.ndim == 2:
            k = int(cfg.get("kernel", 0) or 0)
            if k <= 0 or a.shape[1] % k:
                raise ConvertError("%s: tensor %s has shape %s: not [out, in*kernel] with kernel %s" % (
                    src, n, list(a.shape), cfg.get("kernel")))
            tensors[n] = a.reshape(a.shape[0], a.shape[1] // k, k)
    b = {"config": dict(cfg),
         "state_dict": collections.OrderedDict((n, torch.from_numpy(a)) for n, a in tensors.items()),
         "src_vocab": json.loads(meta["attend.src_vocab"]),
         "tgt_vocab": json.loads(meta.get("attend.tgt_vocab", "[]")),
         "tokenizer": meta.get("attend.tokenizer", "char")}
    check_bundle(b)
    _write_atomic(dst, lambda f: torch.save(b, f))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert between PyTorch (tools/ref_model.py) and attend model files.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("to-attend", help="MODEL.pt -> MODEL.safetensors")
    a.add_argument("src")
    a.add_argument("dst")
    a.add_argument("--meta", help="JSON with config, src_vocab, tgt_vocab, tokenizer (for a plain state_dict)")
    t = sub.add_parser("to-torch", help="MODEL.safetensors -> MODEL.pt")
    t.add_argument("src")
    t.add_argument("dst")
    t.add_argument("--dequantize", action="store_true",
                   help="accept a quantized (int8/f16) file: write the float32 values attend computes with")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "to-attend":
            to_attend(args.src, args.dst, args.meta)
        else:
            to_torch(args.src, args.dst, args.dequantize)
    except (ConvertError, OSError, KeyError, ValueError) as e:
        print("torch_convert: %s" % e, file=sys.stderr)
        return 1
    print("torch_convert: wrote %s" % args.dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
