/*
 * config_diff.c — the first field in which two model configurations differ,
 * with both values as the configuration's JSON spells them
 * (attend_model_config_diff), so that every message about "another model"
 * names the field and both values instead of quoting two cut JSON strings.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* A field's value as text ("gru", "64"); dec_layers 0 and 1 are both one layer. */
static void field_text(const attend_model_config *c, int field, char out[32]) {
    switch (field) {
    case 0: snprintf(out, 32, "%s", attend_cell_name(c->cell)); break;
    case 1: snprintf(out, 32, "%s", attend_decoder_name(c->decoder)); break;
    case 2: snprintf(out, 32, "%s", attend_score_name(c->score)); break;
    case 3: snprintf(out, 32, "%d", c->src_vocab); break;
    case 4: snprintf(out, 32, "%d", c->tgt_vocab); break;
    case 5: snprintf(out, 32, "%d", c->emb); break;
    case 6: snprintf(out, 32, "%d", c->enc_hidden); break;
    case 7: snprintf(out, 32, "%d", c->enc_layers); break;
    case 8: snprintf(out, 32, "%d", c->dec_hidden); break;
    case 9: snprintf(out, 32, "%d", c->attn); break;
    case 10: snprintf(out, 32, "%d", c->dec_layers > 1 ? c->dec_layers : 1); break;
    case 11: snprintf(out, 32, "%d", c->coverage); break;
    case 12: snprintf(out, 32, "%d", c->copy); break;
    case 13: snprintf(out, 32, "%d", c->monotonic); break;
    case 14: snprintf(out, 32, "%s", attend_normalizer_name(c->normalizer)); break;
    case 15: snprintf(out, 32, "%s", attend_encoder_name(c->encoder)); break;
    case 16: snprintf(out, 32, "%d", c->heads); break;
    case 17: snprintf(out, 32, "%s", attend_positions_name(c->positions)); break;
    case 18: snprintf(out, 32, "%d", c->post_norm); break;
    case 19: snprintf(out, 32, "%d", c->max_positions); break;
    case 20: snprintf(out, 32, "%d", c->kernel); break;
    case 21: snprintf(out, 32, "%d", c->conv_relu); break;
    case 22: snprintf(out, 32, "%d", c->max_batch); break;
    case 23: snprintf(out, 32, "%d", c->max_src_len); break;
    default: snprintf(out, 32, "%d", c->max_tgt_len); break;
    }
}

static const char *const FIELDS[] = {"cell",       "decoder",    "score",     "src_vocab",  "tgt_vocab", "emb",
                                     "enc_hidden", "enc_layers", "dec_hidden", "attn",      "dec_layers", "coverage",
                                     "copy",       "monotonic",  "normalizer", "encoder",   "heads",
                                     "positions",  "post_norm",  "max_positions", "kernel", "conv_relu",
                                     "max_batch",  "max_src_len", "max_tgt_len"};

int attend_model_config_diff(const attend_model_config *a, const attend_model_config *b, int capacities,
                             char field[32], char va[32], char vb[32]) {
    if (!a || !b) return 0;
    int n = capacities ? 25 : 22; /* the capacities last */
    for (int f = 0; f < n; f++) {
        char x[32], y[32];
        field_text(a, f, x);
        field_text(b, f, y);
        if (strcmp(x, y)) {
            if (field) snprintf(field, 32, "%s", FIELDS[f]);
            if (va) memcpy(va, x, 32);
            if (vb) memcpy(vb, y, 32);
            return 1;
        }
    }
    return 0;
}
