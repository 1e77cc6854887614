/*
 * registry.c — the encoder kinds. Adding a kind: its file encoders/<kind>.c
 * and one line in AT_ENCODER_KINDS below. The index is the kind's
 * attend_encoder_kind value (cfg.encoder; encoder.c: at_encoder_of), the
 * recurrent encoder 0.
 */
#include "seq2seq/encoders/encoder_kind.h"

/* X(the kind's at_encoder_ops) */
#define AT_ENCODER_KINDS(X) X(at_encoder_rnn) X(at_encoder_transformer) X(at_encoder_conv)

#define AT_DECLARE(ops) extern const at_encoder_ops ops;
AT_ENCODER_KINDS(AT_DECLARE)
#undef AT_DECLARE

#define AT_ENTRY(ops) &ops,
const at_encoder_ops *const at_encoders[] = {AT_ENCODER_KINDS(AT_ENTRY)};
#undef AT_ENTRY

const int at_encoder_count = (int)(sizeof at_encoders / sizeof at_encoders[0]);
