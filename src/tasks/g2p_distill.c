/*
 * g2p_distill.c — the data of sequence-level knowledge distillation (Kim and
 * Rush 2016) for G2P: a teacher (one model or an ensemble) pronounces every
 * word of one part of a dictionary (greedy, in batches), and a new dictionary
 * gets, for those words, the teacher's pronunciation alone or after the
 * references; every other word keeps its references, so a student trained on
 * the new dictionary is still chosen on the real dev words. docs/G2P.md,
 * "The distilled model", gives the recipe and the ablation.
 *
 * Dimension letters: N words per batch, S longest word, L longest output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tasks/g2p_internal.h"

/* Copies word w's pronunciations of src into dst (in order). */
static int copy_refs(attend_g2p_dict *dst, const attend_g2p_dict *src, size_t w) {
    const char *word = src->text + src->words[w].text;
    for (int k = 0; k < src->words[w].count; k++) {
        const char *p = src->text + src->entries[src->words[w].first + k].pron;
        int dup = 0;
        if (!at_g2p_dict_add(dst, word, strlen(word), p, strlen(p), &dup)) return 0;
    }
    return 1;
}

/* 1 when the teacher's output ph [n] is a usable pronunciation: ended before
 * the length limit L, not empty, only phonemes (no special token: ids
 * ATTEND_PAD..ATTEND_UNK). */
static int usable(const int32_t *ph, int n, int L) {
    if (n <= 0 || n >= L) return 0;
    for (int t = 0; t < n; t++)
        if (ph[t] <= ATTEND_UNK) return 0;
    return 1;
}

attend_status attend_g2p_distill(attend_model *const *models, int M, const attend_g2p_dict *d,
                                 attend_g2p_split split, attend_vocab *graphemes, const attend_vocab *phonemes,
                                 attend_g2p_targets targets, attend_g2p_dict **out, attend_g2p_distill_info *info,
                                 attend_error *err) {
    const char *who = "attend_g2p_distill";
    CHECK(out, err, ATTEND_ERR_NULL, "%s: out is NULL", who);
    *out = NULL;
    CHECK(models && d && graphemes && phonemes, err, ATTEND_ERR_NULL, "%s: %s is NULL", who,
          !models ? "models" : !d ? "dictionary" : !graphemes ? "graphemes" : "phonemes");
    CHECK(M >= 1 && M <= 64, err, ATTEND_ERR_ARG, "%s: %d models, need 1..64", who, M);
    for (int k = 0; k < M; k++) CHECK(models[k], err, ATTEND_ERR_NULL, "%s: model %d is NULL", who, k);
    CHECK(split >= ATTEND_G2P_TRAIN && split <= ATTEND_G2P_ALL, err, ATTEND_ERR_ARG, "%s: unknown split %d", who,
          (int)split);
    CHECK(targets == ATTEND_G2P_TARGETS_TEACHER || targets == ATTEND_G2P_TARGETS_BOTH, err, ATTEND_ERR_ARG,
          "%s: targets %d: expected ATTEND_G2P_TARGETS_TEACHER or _BOTH", who, (int)targets);
    attend_g2p_distill_info in = {0, 0, 0, 0};
    int B = 0, max_src = ATTEND_G2P_MAX_LEN, max_tgt = ATTEND_G2P_MAX_LEN;
    int Vg = attend_vocab_size(graphemes), Vp = attend_vocab_size(phonemes);
    for (int k = 0; k < M; k++) {
        const attend_model_config *c = attend_model_get_config(models[k]);
        /* the members share one phone set: an id means one phoneme in every one of them */
        CHECK(c->tgt_vocab == Vp && c->src_vocab == Vg, err, ATTEND_ERR_ARG,
              "%s: model %d has %d %s, the vocabulary given has %d", who, k,
              c->tgt_vocab != Vp ? c->tgt_vocab : c->src_vocab, c->tgt_vocab != Vp ? "phonemes" : "graphemes",
              c->tgt_vocab != Vp ? Vp : Vg);
        if (k == 0 || c->max_batch < B) B = c->max_batch;
        if (c->max_src_len < max_src) max_src = c->max_src_len;
        if (c->max_tgt_len < max_tgt) max_tgt = c->max_tgt_len;
    }
    int S = max_src, L = max_tgt + 1 < ATTEND_G2P_MAX_LEN ? max_tgt + 1 : ATTEND_G2P_MAX_LEN;
    /* sources [B,S], lengths [B], word ids [B], outputs [B,L], output lengths [B] */
    size_t n32 = (size_t)B * S + 2 * (size_t)B + (size_t)B * L + (size_t)B;
    int32_t *mem = malloc(n32 * sizeof *mem);
    size_t text_cap = (size_t)L * (ATTEND_MAX_TOKEN_BYTES + 1) + 1;
    char *text = malloc(text_cap);
    attend_g2p_dict *nd = at_g2p_dict_new();
    if (!mem || !text || !nd) {
        free(mem);
        free(text);
        attend_g2p_dict_free(nd);
        return at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
    }
    int32_t *src = mem, *src_len = src + (size_t)B * S, *which = src_len + B, *ph = which + B;
    int32_t *ph_len = ph + (size_t)B * L;
    attend_status st = ATTEND_OK;
    size_t w = 0;
    while (st == ATTEND_OK && w < d->nw) {
        /* words outside the split are copied as they are; the next batch of
         * the split's words is decoded, then added in word order */
        int nb = 0;
        size_t w0 = w;
        while (st == ATTEND_OK && w < d->nw && nb < B) {
            const char *word = d->text + d->words[w].text;
            if (at_g2p_in_split(word, split)) {
                int ns = 0;
                st = attend_g2p_encode_word(graphemes, word, strlen(word), src + (size_t)nb * S, S, &ns, err);
                if (st == ATTEND_ERR_CAPACITY)
                    st = at_fail(err, ATTEND_ERR_CAPACITY, "%s: word '%.64s' is longer than the teacher's max_src_len=%d",
                                 who, word, max_src);
                else if (st != ATTEND_OK) {
                    char why[ATTEND_ERROR_MSG_MAX];
                    snprintf(why, sizeof why, "%s", err ? err->msg : "");
                    st = at_fail(err, st, "%s: word '%.64s': %s", who, word, why);
                }
                src_len[nb] = ns;
                which[nb++] = (int32_t)w;
            }
            w++;
        }
        if (st == ATTEND_OK && nb > 0) {
            st = at_g2p_greedy_rows(models, M, src, src_len, nb, S, L, ph, ph_len, err);
        }
        for (size_t v = w0, k = 0; st == ATTEND_OK && v < w; v++) {
            if (k >= (size_t)nb || which[k] != (int32_t)v) {
                if (!copy_refs(nd, d, v)) st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
                continue;
            }
            const int32_t *p = ph + k * (size_t)L;
            int n = ph_len[k++];
            in.words++;
            if (!usable(p, n, L)) {
                in.failed++;
                if (!copy_refs(nd, d, v)) st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
                continue;
            }
            st = attend_vocab_decode(phonemes, ATTEND_TOKENIZE_SPACE, p, n, text, text_cap, err);
            if (st != ATTEND_OK) break;
            int agree = 0;
            for (int r = 0; r < d->words[v].count; r++)
                agree |= !strcmp(d->text + d->entries[d->words[v].first + r].pron, text);
            in.agree += agree;
            in.differ += !agree;
            const char *word = d->text + d->words[v].text;
            int dup = 0;
            if ((targets == ATTEND_G2P_TARGETS_BOTH && !copy_refs(nd, d, v)) ||
                !at_g2p_dict_add(nd, word, strlen(word), text, strlen(text), &dup))
                st = at_fail(err, ATTEND_ERR_ALLOC, "%s: out of memory", who);
        }
    }
    free(mem);
    free(text);
    if (st != ATTEND_OK) {
        attend_g2p_dict_free(nd);
        return st;
    }
    at_g2p_dict_finish(nd);
    nd->info.lines = nd->info.entries;
    *out = nd;
    if (info) *info = in;
    return at_ok(err);
}
