/*
 * g2p_web.c — the C side of the G2P page (web/index.html), compiled with the
 * library by tools/wasm_build.sh (Emscripten). The shipped model is embedded
 * in the module's file system at /g2p.safetensors. One word at a time:
 * g2p_web_pronounce() runs greedy decoding (what `attend g2p WORD` prints)
 * and a beam search for the n-best list (what `attend g2p --nbest N WORD`
 * prints), and keeps the results for the getters below until the next call.
 * Lexicon first (issue 29): when the page embeds a pronunciation lexicon
 * (/lexicon.dict, CMUdict format), g2p_web_lookup() gives a word's entries
 * from it, as `attend g2p --lexicon FILE` prints them; the page calls the
 * model only for words the lexicon lacks.
 * Nothing here prints; errors come back as a message (g2p_web_error).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attend.h"

#define K_MAX 8 /* n-best and beam width at most this */
#define S_MAX ATTEND_G2P_MAX_LEN
#define L_MAX ATTEND_G2P_MAX_LEN
#define TEXT_MAX (L_MAX * (ATTEND_MAX_TOKEN_BYTES + 1) + 1)

/* the page's whole state: one model, one word's results */
static attend_model *model;
static attend_vocab *graphemes, *phonemes;
static int L;                            /* longest output: the model's longest + 1 */
static int trained_S;                    /* the model's longest training word */
static int32_t src[S_MAX];               /* [ns] */
static int ns;
static int n_hyp;                        /* hypotheses kept: 0 greedy, 1.. the n-best */
static int32_t out[(K_MAX + 1) * L_MAX]; /* [n_hyp,L] */
static int32_t out_len[K_MAX + 1];       /* [n_hyp] */
static double score[K_MAX + 1];          /* [n_hyp]; greedy: its forced log-probability */
static attend_real align[(K_MAX + 1) * L_MAX * S_MAX]; /* [n_hyp,L,ns] */
static char text[TEXT_MAX];
static char message[ATTEND_ERROR_MSG_MAX + 160];
static attend_g2p_lexicon *lexicon;      /* NULL: the page has none */
static int from_lexicon;                 /* the kept hypotheses are the lexicon's entries */
static char entries[K_MAX + 1][TEXT_MAX]; /* [n_hyp] their phonemes, space-separated */

static int fail(const char *fmt, const char *a, const char *b) {
    snprintf(message, sizeof message, fmt, a, b);
    return -1;
}

/* Loads the model (twice, as the command does: first its trained lengths,
 * then with room for any word). 0, or -1 with g2p_web_error(). */
int g2p_web_init(const char *path);
int g2p_web_init(const char *path) {
    attend_error err = {0};
    attend_model_config cap;
    memset(&cap, 0, sizeof cap);
    cap.max_batch = 1;
    if (attend_g2p_model_load(&model, path, &cap, &graphemes, &phonemes, &err)) return fail("%s%s", err.msg, "");
    attend_model_config cfg = *attend_model_get_config(model);
    attend_model_free(model);
    attend_vocab_free(graphemes);
    attend_vocab_free(phonemes);
    trained_S = cfg.max_src_len;
    L = cfg.max_tgt_len + 1 < L_MAX ? cfg.max_tgt_len + 1 : L_MAX;
    cap.max_batch = K_MAX;
    cap.max_src_len = S_MAX;
    cap.max_tgt_len = L;
    if (attend_g2p_model_load(&model, path, &cap, &graphemes, &phonemes, &err)) return fail("%s%s", err.msg, "");
    return 0;
}

/* Reads the lexicon at path (after g2p_web_init: its phonemes must be the
 * model's; stress digits stripped unless the model has them). Returns its
 * number of words, 0 when there is no file at path (the page then has no
 * lexicon), or -1 with a message. */
int g2p_web_lexicon(const char *path);
int g2p_web_lexicon(const char *path) {
    attend_error err = {0};
    if (!model) return fail("the model is not loaded%s%s", "", "");
    attend_g2p_lexicon_free(lexicon);
    lexicon = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    attend_g2p_options opt = {0};
    opt.keep_stress = attend_g2p_vocab_has_stress(phonemes);
    if (attend_g2p_lexicon_read(&lexicon, path, &opt, NULL, &err) ||
        attend_g2p_lexicon_check_phonemes(lexicon, phonemes, "the lexicon", &err)) {
        attend_g2p_lexicon_free(lexicon);
        lexicon = NULL;
        return fail("%s%s", err.msg, "");
    }
    attend_g2p_lexicon_info info;
    attend_g2p_lexicon_get_info(lexicon, &info);
    return info.words;
}

/* Looks word up in the lexicon: hypothesis 0 is its first entry, 1..nbest the
 * next ones (`attend g2p --lexicon FILE --nbest N` lists them so). Returns the
 * number of entries kept, 0 when the lexicon lacks the word (or there is
 * none), -1 with a message on error. The entries have no score and no
 * alignment (g2p_web_score is NaN, g2p_web_letters 0). */
int g2p_web_lookup(const char *word, int nbest);
int g2p_web_lookup(const char *word, int nbest) {
    attend_error err = {0};
    n_hyp = ns = 0;
    from_lexicon = 0;
    if (nbest < 0 || nbest > K_MAX) return fail("n-best must be 0..8%s%s", "", "");
    int w = attend_g2p_lexicon_find(lexicon, word, strlen(word));
    if (w < 0) return 0;
    int n = attend_g2p_lexicon_prons(lexicon, w);
    if (n > nbest + 1) n = nbest + 1;
    for (int k = 0; k < n; k++) {
        if (attend_g2p_lexicon_pron(lexicon, w, k, entries[k], sizeof entries[k], &err)) return fail("%s%s", err.msg, "");
        int count = 1;
        for (const char *c = entries[k]; *c; c++) count += *c == ' ';
        out_len[k] = count;
        score[k] = NAN;
    }
    from_lexicon = 1;
    n_hyp = n;
    return n;
}

/* 1 when the kept hypotheses came from the lexicon (g2p_web_lookup), 0 from
 * the model. */
int g2p_web_from_lexicon(void);
int g2p_web_from_lexicon(void) { return from_lexicon; }

/* Pronounces word (UTF-8): hypothesis 0 is greedy, 1..nbest the beam's
 * n-best (beam width max(nbest, 5), as the command). Returns the number of
 * hypotheses, or -1 with a message for a word it cannot pronounce. */
int g2p_web_pronounce(const char *word, int nbest);
int g2p_web_pronounce(const char *word, int nbest) {
    attend_error err = {0};
    n_hyp = ns = 0;
    from_lexicon = 0;
    if (!model) return fail("the model is not loaded%s%s", "", "");
    if (nbest < 0 || nbest > K_MAX) return fail("n-best must be 0..8%s%s", "", "");
    size_t len = strlen(word);
    size_t cps = 0;
    for (size_t i = 0; i < len; i++) cps += ((unsigned char)word[i] & 0xC0) != 0x80;
    if (cps > S_MAX) {
        snprintf(message, sizeof message, "'%.40s...' has %zu letters; a word may have at most %d", word, cps, S_MAX);
        return -1;
    }
    if (attend_g2p_encode_word(graphemes, word, len, src, S_MAX, &ns, &err)) {
        ns = 0;
        return fail("cannot pronounce '%.80s': %s", word, err.msg);
    }
    /* letters the model never saw: not pronounced (the command would read them as <unk>) */
    char unknown[160] = "";
    size_t at = 0, k = 0;
    for (int j = 0; j < ns; j++) {
        size_t start = at; /* the j-th code point of word */
        at++;
        while (at < len && ((unsigned char)word[at] & 0xC0) == 0x80) at++;
        if (src[j] == ATTEND_UNK && k + (at - start) + 2 < sizeof unknown) {
            if (k) unknown[k++] = ' ';
            memcpy(unknown + k, word + start, at - start);
            k += at - start;
            unknown[k] = '\0';
        }
    }
    if (k) {
        ns = 0;
        return fail("cannot pronounce '%.80s': the model does not know the letter(s) %s", word, unknown);
    }
    int32_t sl = ns;
    if (attend_model_greedy(model, src, &sl, 1, ns, L, out, out_len, align, &err))
        return fail("%s%s", err.msg, "");
    score[0] = NAN; /* an output cut at the length limit has no forced score */
    if (out_len[0] < L && attend_model_score(model, src, ns, out, out_len[0], &score[0], NULL, &err))
        return fail("%s%s", err.msg, "");
    n_hyp = 1;
    if (nbest > 0) {
        int got = 0, beam = nbest > 5 ? nbest : 5;
        if (attend_model_beam(model, src, ns, beam, nbest, L, 0.0, out + L, out_len + 1, score + 1,
                              align + (size_t)L * ns, &got, &err))
            return fail("%s%s", err.msg, "");
        n_hyp += got;
    }
    return n_hyp;
}

const char *g2p_web_error(void);
const char *g2p_web_error(void) { return message; }

/* The model's longest training word (longer words are pronounced, less well). */
int g2p_web_trained_letters(void);
int g2p_web_trained_letters(void) { return trained_S; }

/* Letters of the last word (its length in code points). */
int g2p_web_letters(void);
int g2p_web_letters(void) { return ns; }

/* Hypothesis h: phoneme count, phonemes joined by spaces, log-probability,
 * the t-th phoneme, and its alignment [len,letters] (a pointer into the
 * module's memory, row-major, float32). NULL/0 outside the range. */
int g2p_web_length(int h);
int g2p_web_length(int h) { return h >= 0 && h < n_hyp ? out_len[h] : 0; }

const char *g2p_web_phonemes(int h);
const char *g2p_web_phonemes(int h) {
    attend_error err = {0};
    if (h < 0 || h >= n_hyp) return NULL;
    if (from_lexicon) return entries[h];
    if (attend_vocab_decode(phonemes, ATTEND_TOKENIZE_SPACE, out + (size_t)h * L, out_len[h], text, sizeof text, &err))
        return NULL;
    return text;
}

const char *g2p_web_phoneme(int h, int t);
const char *g2p_web_phoneme(int h, int t) {
    if (h < 0 || h >= n_hyp || t < 0 || t >= out_len[h] || from_lexicon) return NULL;
    return attend_vocab_token(phonemes, out[(size_t)h * L + t]);
}

double g2p_web_score(int h);
double g2p_web_score(int h) { return h >= 0 && h < n_hyp ? score[h] : 0; }

const attend_real *g2p_web_alignment(int h);
const attend_real *g2p_web_alignment(int h) {
    return h >= 0 && h < n_hyp && !from_lexicon ? align + (size_t)h * L * ns : NULL;
}
