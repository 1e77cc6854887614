/*
 * config.c — the model configuration's check (attend_model_config_check):
 * ranges of the fields every model has, the decoder kind, the extensions'
 * keys and the combination rules they declare (extension.c), and the
 * attention score against the widths.
 */
#include "seq2seq/decoders/decoder.h"
#include "seq2seq/encoder.h"
#include "seq2seq/encoders/encoder_kind.h"
#include "seq2seq/extension.h"

attend_status attend_model_config_check(const attend_model_config *c, attend_error *err) {
    CHECK(c, err, ATTEND_ERR_NULL, "model config is NULL");
    CHECK(c->cell == ATTEND_CELL_GRU || c->cell == ATTEND_CELL_LSTM, err, ATTEND_ERR_ARG,
          "model config: cell=%d is not GRU (0) or LSTM (1)", (int)c->cell);
    CHECK((int)c->decoder >= 0 && (int)c->decoder < at_decoder_count && at_decoders[c->decoder], err,
          ATTEND_ERR_ARG, "model config: decoder=%d is unknown", (int)c->decoder);
    const at_decoder_ops *dec = at_decoders[c->decoder];
    CHECK(c->src_vocab >= 5 && c->src_vocab <= 10000000, err, ATTEND_ERR_SHAPE,
          "model config: src_vocab=%d, must be in [5, 1e7]", c->src_vocab);
    if (dec->vocabulary)
        CHECK(c->tgt_vocab >= 5 && c->tgt_vocab <= 10000000, err, ATTEND_ERR_SHAPE,
              "model config: tgt_vocab=%d, must be in [5, 1e7]", c->tgt_vocab);
    CHECK(c->emb >= 1 && c->emb <= 65536, err, ATTEND_ERR_SHAPE, "model config: emb=%d, must be in [1, 65536]", c->emb);
    CHECK(c->enc_hidden >= 1 && c->enc_hidden <= 32768, err, ATTEND_ERR_SHAPE,
          "model config: enc_hidden=%d, must be in [1, 32768]", c->enc_hidden);
    CHECK(c->enc_layers >= 1 && c->enc_layers <= AT_MAX_LAYERS, err, ATTEND_ERR_SHAPE,
          "model config: enc_layers=%d, must be in [1, %d]", c->enc_layers, AT_MAX_LAYERS);
    CHECK(c->dec_hidden >= 1 && c->dec_hidden <= 65536, err, ATTEND_ERR_SHAPE,
          "model config: dec_hidden=%d, must be in [1, 65536]", c->dec_hidden);
    CHECK(c->max_batch >= 1 && c->max_batch <= 1 << 20, err, ATTEND_ERR_SHAPE,
          "model config: max_batch=%d, must be in [1, 2^20]", c->max_batch);
    CHECK(c->max_src_len >= 1 && c->max_src_len <= 1 << 16, err, ATTEND_ERR_SHAPE,
          "model config: max_src_len=%d, must be in [1, 65536]", c->max_src_len);
    CHECK(c->max_tgt_len >= 1 && c->max_tgt_len <= 1 << 16, err, ATTEND_ERR_SHAPE,
          "model config: max_tgt_len=%d, must be in [1, 65536]", c->max_tgt_len);
    CHECK(c->dec_layers >= 0 && c->dec_layers <= AT_MAX_LAYERS, err, ATTEND_ERR_SHAPE,
          "model config: dec_layers=%d, must be in [0, %d] (0 and 1: one layer)", c->dec_layers, AT_MAX_LAYERS);
    const at_encoder_ops *enc = at_encoder_of(c);
    CHECK(enc, err, ATTEND_ERR_ARG, "model config: encoder=%d is unknown", (int)c->encoder);
    TRY(enc->check(c, err));
    int E = enc->width(c);
    if (dec->check) TRY(dec->check(c, E, err));
    /* the extensions' keys, and what does not combine, naming both */
    TRY(at_ext_config_check(c, err));
    if (dec->attentive) {
        attend_score_config sc = {c->score, c->dec_hidden, E, c->attn, 1, 0};
        attend_error e2;
        if (attend_score_config_check(&sc, &e2) != ATTEND_OK)
            return at_fail(err, e2.status, "model config: score %d with dec_hidden=%d and encoder width %s=%d: %s",
                           (int)c->score, c->dec_hidden, c->encoder ? "emb" : "2*enc_hidden", E, e2.msg);
    }
    return at_ok(err);
}
