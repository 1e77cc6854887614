/*
 * registry.c — the decoder kinds, indexed by attend_decoder_kind. Adding a
 * kind: its file decoders/<kind>.c and one line in AT_DECODER_KINDS below
 * (plus the public enum value in include/attend/seq2seq.h and its name).
 */
#include "seq2seq/decoders/decoder.h"

/* X(public enum value, the kind's at_decoder_ops) */
#define AT_DECODER_KINDS(X)                          \
    X(ATTEND_DECODER_BAHDANAU, at_decoder_bahdanau)  \
    X(ATTEND_DECODER_LUONG, at_decoder_luong)        \
    X(ATTEND_DECODER_NONE, at_decoder_none)          \
    X(ATTEND_DECODER_POINTER, at_decoder_pointer)      \
    X(ATTEND_DECODER_TRANSFORMER, at_decoder_transformer) \
    X(ATTEND_DECODER_READOUT, at_decoder_readout)

#define AT_DECLARE(kind, ops) extern const at_decoder_ops ops;
AT_DECODER_KINDS(AT_DECLARE)
#undef AT_DECLARE

#define AT_ENTRY(kind, ops) [kind] = &ops,
const at_decoder_ops *const at_decoders[] = {AT_DECODER_KINDS(AT_ENTRY)};
#undef AT_ENTRY

const int at_decoder_count = (int)(sizeof at_decoders / sizeof at_decoders[0]);
