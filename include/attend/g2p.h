/*
 * attend/g2p.h — grapheme-to-phoneme conversion on a pronouncing dictionary.
 *
 * Part of the public header: include <attend.h> (it includes every part);
 * the conventions every function follows are written at the top of
 * attend/core.h.
 */
#ifndef ATTEND_G2P_H
#define ATTEND_G2P_H

#include "attend/seq2seq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------------- G2P */
/*
 * Grapheme-to-phoneme conversion on a pronouncing dictionary (docs/G2P.md).
 * A dictionary line is "word PH1 PH2 ..." (CMUdict: ARPAbet phonemes, an
 * alternate pronunciation as "word(2)"). A G2P model is an ordinary model file
 * whose source side is characters (tokenizer "char", the one the file names)
 * and whose target side is phonemes (one token each, joined with spaces).
 */
#define ATTEND_G2P_MAX_LEN 64 /* longest word (characters) and pronunciation (phonemes) */

typedef struct attend_g2p_dict attend_g2p_dict; /* a parsed dictionary (opaque) */

typedef struct {
    int keep_stress;    /* 0: strip stress digits ("AH0" -> "AH"), the usual G2P setting */
    int skip_malformed; /* 0: the first odd line is an error naming path:line; 1: skip and count */
} attend_g2p_options;

typedef struct {
    int lines;          /* lines read */
    int entries;        /* pronunciations kept */
    int words;          /* distinct words */
    int comments;       /* lines that are comments (";;;" or "#" first) */
    int blank;          /* empty or white-space lines */
    int skipped;        /* odd lines skipped (skip_malformed) */
    int duplicates;     /* a word's pronunciation repeated (e.g. equal once stress is stripped) */
    int max_word_len;   /* longest word, characters */
    int max_pron_len;   /* longest pronunciation, phonemes */
    char first_skipped[ATTEND_ERROR_MSG_MAX]; /* "path:line: why" of the first skipped line, or "" */
} attend_g2p_dict_info;

/*
 * Parses dictionary text (len bytes; label names it in messages, e.g. the
 * path). Per line (LF or CRLF; the last may lack its newline): blank lines and
 * comment lines (first non-blank characters ";;;" or "#") are counted and
 * ignored; an inline comment (white space, then "#", to the end of the line) is
 * removed. The rest is a word and one or more phonemes separated by spaces or
 * tabs. The word may end in an alternate marker "(N)", N = 1..999, which is
 * removed; ASCII letters are lower-cased; a word is valid UTF-8 of 1..64
 * characters without control characters. A phoneme is upper-case ASCII
 * letters, optionally followed by one stress digit, which is removed unless
 * keep_stress. Odd lines (no phoneme, bad marker, bad phoneme, bad UTF-8, too
 * long) are ATTEND_ERR_FORMAT "label:line: why", or skipped and counted.
 * Words are numbered in order of first appearance, a word's pronunciations in
 * file order, duplicates dropped. opt may be NULL (defaults: all zero).
 */
attend_status attend_g2p_dict_parse(attend_g2p_dict **out, const char *text, size_t len, const char *label,
                                    const attend_g2p_options *opt, attend_error *err);
/* The same from a file (ATTEND_ERR_IO naming the path when it cannot be read). */
attend_status attend_g2p_dict_read(attend_g2p_dict **out, const char *path, const attend_g2p_options *opt,
                                   attend_error *err);
void attend_g2p_dict_free(attend_g2p_dict *d); /* NULL is fine */
void attend_g2p_dict_get_info(const attend_g2p_dict *d, attend_g2p_dict_info *info);
int attend_g2p_dict_words(const attend_g2p_dict *d); /* distinct words (0 for NULL) */
/* Word w (0-based) as stored (lower-cased, marker removed); NULL out of range. */
const char *attend_g2p_dict_word(const attend_g2p_dict *d, int w);
/* Number of pronunciations of word w (0 out of range), and the k-th as
 * phonemes joined by single spaces ("HH AH L OW"); NULL out of range. */
int attend_g2p_dict_prons(const attend_g2p_dict *d, int w);
const char *attend_g2p_dict_pron(const attend_g2p_dict *d, int w, int k);

/* The deterministic three-way split, by a hash of the word's bytes (FNV-1a
 * 64 then the splitmix64 finaliser, modulo 100): 0..89 TRAIN, 90..94 DEV,
 * 95..99 TEST. All pronunciations of a word share its word, so its split. */
typedef enum {
    ATTEND_G2P_TRAIN = 0,
    ATTEND_G2P_DEV = 1,
    ATTEND_G2P_TEST = 2,
    ATTEND_G2P_ALL = 3, /* selects every word where a split is asked for */
} attend_g2p_split;
attend_g2p_split attend_g2p_split_of(const char *word, size_t len);
const char *attend_g2p_split_name(attend_g2p_split split); /* "train" "dev" "test" "all" */

/*
 * One pair per pronunciation of every word in `split`: the word's characters
 * (graphemes vocabulary, CHAR tokenizer) -> its phonemes (phonemes vocabulary,
 * SPACE tokenizer), in word order. grow != 0 adds unseen tokens (training
 * data); otherwise they become ATTEND_UNK. *out is NULL on error.
 */
attend_status attend_g2p_dataset(attend_dataset **out, const attend_g2p_dict *d, attend_g2p_split split,
                                 attend_vocab *graphemes, attend_vocab *phonemes, int grow, attend_error *err);

/* Levenshtein distance (unit insert/delete/substitute) between id sequences
 * a [na] and b [nb]; -1 when a length is outside [0, ATTEND_G2P_MAX_LEN] or a
 * needed pointer is NULL. No allocation (two rows on the stack). */
int attend_g2p_edit_distance(const int32_t *a, int na, const int32_t *b, int nb);

/* Running error counts. PER = phone_errors / ref_phones, WER = wrong / words. */
typedef struct {
    long words;        /* words scored */
    long wrong;        /* words whose output equals none of the references */
    long phone_errors; /* edit distance to the closest reference, summed */
    long ref_phones;   /* length of that reference, summed */
} attend_g2p_counts;

/*
 * Scores one word's output hyp [hyp_len] against its n_refs >= 1 reference
 * pronunciations refs[r] [ref_lens[r]], adding to *c: the word is right when
 * hyp equals any reference; the phone errors are the edit distance to the
 * closest reference (ties: the first), counted against that reference's
 * length. Lengths above ATTEND_G2P_MAX_LEN are ATTEND_ERR_CAPACITY.
 */
attend_status attend_g2p_count_word(attend_g2p_counts *c, const int32_t *hyp, int hyp_len,
                                    const int32_t *const *refs, const int *ref_lens, int n_refs,
                                    attend_error *err);
double attend_g2p_per(const attend_g2p_counts *c); /* 0 when nothing was counted */
double attend_g2p_wer(const attend_g2p_counts *c);

/*
 * Loads a G2P model file: attend_model_load (capacity as there, may be NULL),
 * then checks that it is one: the file's tokenizer is "char" (the graphemes),
 * the decoder is not POINTER, and every phoneme token (after the four
 * specials) is upper-case ASCII letters with at most one trailing digit. Both
 * vocabularies are returned (caller frees). Nothing is returned on error.
 */
attend_status attend_g2p_model_load(attend_model **out, const char *path, const attend_model_config *capacity,
                                    attend_vocab **graphemes, attend_vocab **phonemes, attend_error *err);

/* A word as model input: ASCII letters lower-cased, then one id per character
 * into ids [max_ids] (unknown characters become ATTEND_UNK). An empty word, one
 * with white space or control characters, or over ATTEND_G2P_MAX_LEN
 * characters is ATTEND_ERR_ARG; more than max_ids is ATTEND_ERR_CAPACITY. */
attend_status attend_g2p_encode_word(attend_vocab *graphemes, const char *word, size_t len, int32_t *ids,
                                     int max_ids, int *n_ids, attend_error *err);

/*
 * Pronounces one word with greedy decoding and writes the phonemes, joined by
 * spaces, into out (cap bytes, NUL-terminated). Allocates nothing: the model's
 * own buffers (sized at load) and stack arrays of ATTEND_G2P_MAX_LEN are all it
 * uses, so a loop over words runs in a fixed memory budget. The word must fit
 * the model's max_src_len; the output is cut at min(max_tgt_len + 1,
 * ATTEND_G2P_MAX_LEN) phonemes. Not thread-safe on one model (it reuses the
 * model's activations); different models may be used at once.
 */
attend_status attend_g2p_pronounce(attend_model *m, attend_vocab *graphemes, const attend_vocab *phonemes,
                                   const char *word, size_t len, char *out, size_t cap, attend_error *err);

/*
 * As attend_g2p_pronounce with an ensemble of M models (1..64, distinct
 * handles sharing graphemes and phonemes): greedy over the mean of the
 * members' log-probabilities (attend_ensemble_greedy, which allocates its
 * per-call state once per call; M = 1 is attend_g2p_pronounce exactly). The
 * word must fit every member's max_src_len (else ATTEND_ERR_CAPACITY); the
 * output is cut at the smallest max_tgt_len + 1. Not thread-safe on one set
 * of models.
 */
attend_status attend_g2p_pronounce_ensemble(attend_model *const *models, int M, attend_vocab *graphemes,
                                            const attend_vocab *phonemes, const char *word, size_t len, char *out,
                                            size_t cap, attend_error *err);

typedef struct {
    int beam;      /* 0 or 1: greedy decoding in batches; 2..64: beam search of that width */
    double alpha;  /* beam: length normalisation (see attend_model_beam) */
    int batch;     /* greedy: words per batch, 1..the model's max_batch (0 = max_batch) */
    int max_words; /* evaluate at most this many words of the split (0 = all) */
    double coverage_penalty; /* beam: Wu et al.'s coverage penalty (attend_beam_options; 0 = none) */
    int ignore_stress; /* 1: a phoneme and the references compare without their stress digits
                        * ("AH0" = "AH1"), so a stress model scores like a stress-free one */
} attend_g2p_eval_options;

/*
 * Decodes every word of `split` in d and counts errors against its
 * pronunciations (attend_g2p_count_word). References are mapped with the
 * model's phoneme vocabulary (a phoneme it lacks becomes ATTEND_UNK and never
 * matches). The model's max_src_len must cover the split's longest word and
 * its max_batch the batch / beam width. Work buffers are allocated once per
 * call. *c is overwritten.
 */
attend_status attend_g2p_evaluate(attend_model *m, const attend_g2p_dict *d, attend_g2p_split split,
                                  attend_vocab *graphemes, attend_vocab *phonemes,
                                  const attend_g2p_eval_options *opt, attend_g2p_counts *c, attend_error *err);

/*
 * As attend_g2p_evaluate with an ensemble of M models (1..64, distinct
 * handles sharing graphemes and phonemes): greedy and beam search go through
 * attend_ensemble_greedy / attend_ensemble_beam (the mean of the models'
 * log-softmax). M = 1 is exactly attend_g2p_evaluate. The coverage penalty
 * needs M = 1 (ATTEND_ERR_ARG otherwise). Every model's max_batch must cover
 * the batch / beam width; words longer than the shortest max_src_len are
 * ATTEND_ERR_CAPACITY, and outputs are cut at the smallest max_tgt_len + 1.
 */
attend_status attend_g2p_evaluate_ensemble(attend_model *const *models, int M, const attend_g2p_dict *d,
                                           attend_g2p_split split, attend_vocab *graphemes, attend_vocab *phonemes,
                                           const attend_g2p_eval_options *opt, attend_g2p_counts *c,
                                           attend_error *err);

/* ------------------------------------------------------------ distillation */
/*
 * Sequence-level knowledge distillation (Kim and Rush 2016; docs/G2P.md, "The
 * distilled model"): a teacher pronounces words, and a student is trained on
 * its pronunciations. attend_g2p_distill decodes every word of `split` in d
 * with the teacher (one model, M = 1, or an ensemble: greedy over the mean of
 * the members' log-probabilities, attend_ensemble_greedy; in batches of the
 * smallest max_batch) and returns a new dictionary (caller frees) with the
 * same words in the same order: a word of the split gets the teacher's
 * pronunciation (TEACHER) or its references followed by the teacher's when
 * that differs from all of them (BOTH); a teacher output that is empty, has a
 * special token or was cut at the length limit keeps the references instead
 * (counted as failed). Every other word keeps its references, so a student
 * trained on the result (its TRAIN words) is evaluated on the real dev and
 * test words. Every model's src_vocab / tgt_vocab must be the size of
 * graphemes / phonemes (one phone set for all members; ATTEND_ERR_ARG naming
 * the model otherwise). Words longer than the smallest max_src_len are
 * ATTEND_ERR_CAPACITY, a word the graphemes cannot encode is the encoder's
 * error prefixed with the word. *out is NULL on error; info may be NULL.
 * Work buffers are allocated once per call. Not thread-safe on one set of
 * models.
 */
typedef enum {
    ATTEND_G2P_TARGETS_TEACHER = 1, /* the teacher's pronunciation only */
    ATTEND_G2P_TARGETS_BOTH = 2,    /* the references, then the teacher's when it differs */
} attend_g2p_targets;

typedef struct {
    long words;  /* words of the split decoded */
    long agree;  /* ... whose teacher pronunciation equals one of their references */
    long differ; /* ... whose teacher pronunciation equals none of them */
    long failed; /* ... with no usable teacher pronunciation (references kept) */
} attend_g2p_distill_info;

attend_status attend_g2p_distill(attend_model *const *models, int M, const attend_g2p_dict *d,
                                 attend_g2p_split split, attend_vocab *graphemes, const attend_vocab *phonemes,
                                 attend_g2p_targets targets, attend_g2p_dict **out, attend_g2p_distill_info *info,
                                 attend_error *err);

/* ------------------------------------------------------------ lexicon */
/*
 * A pronunciation lexicon looked up before the model (docs/G2P.md, "Lexicon
 * first"): a CMUdict-format dictionary in one compact read-only block (words
 * sorted, phonemes one byte each; the same bytes are its file form, so a
 * saved lexicon loads with one read). Lookups fold ASCII upper case, as the
 * dictionary parser does, and cost one binary search; they allocate nothing
 * and may run from any number of threads at once on one lexicon.
 */
typedef struct attend_g2p_lexicon attend_g2p_lexicon;

typedef struct {
    int words;               /* distinct words */
    int entries;             /* pronunciations */
    int phonemes;            /* distinct phonemes */
    int stress;              /* 1: phonemes carry stress digits ("AH0") */
    size_t bytes;            /* the block (= the file form's size) */
    int64_t source_size;     /* size and modification time (ns) of the text file it was */
    int64_t source_mtime_ns; /* read from by attend_g2p_lexicon_read (0: none): a cache's stamp */
} attend_g2p_lexicon_info;

/* A lexicon from a parsed dictionary (its first pronunciation of each word
 * stays first). A word with more than 255 pronunciations or more than 255
 * distinct phonemes is ATTEND_ERR_CAPACITY. *out is NULL on error. */
attend_status attend_g2p_lexicon_from_dict(attend_g2p_lexicon **out, const attend_g2p_dict *d, attend_error *err);
/* Reads a CMUdict-format text file (attend_g2p_dict_read with opt, so a
 * malformed line is ATTEND_ERR_FORMAT "path:line: why", or skipped with
 * opt->skip_malformed; keep_stress as there) into a lexicon stamped with the
 * file's size and modification time. dict_info (may be NULL) gets the
 * parser's counts (lines skipped, the first of them). */
attend_status attend_g2p_lexicon_read(attend_g2p_lexicon **out, const char *path, const attend_g2p_options *opt,
                                      attend_g2p_dict_info *dict_info, attend_error *err);
/* Writes the file form to path (through "<path>.tmp.<pid>", renamed when
 * complete: a reader never sees half a file; ATTEND_ERR_IO naming the path). */
attend_status attend_g2p_lexicon_save(const attend_g2p_lexicon *lx, const char *path, attend_error *err);
/* Reads a file written by attend_g2p_lexicon_save. Every offset, record and
 * phoneme id is checked: a damaged or truncated file is ATTEND_ERR_FORMAT
 * naming the path, never misread. */
attend_status attend_g2p_lexicon_load(attend_g2p_lexicon **out, const char *path, attend_error *err);
void attend_g2p_lexicon_free(attend_g2p_lexicon *lx); /* NULL is fine */
void attend_g2p_lexicon_get_info(const attend_g2p_lexicon *lx, attend_g2p_lexicon_info *info);
/* The index of word [len] (ASCII upper case folded), or -1 when the lexicon
 * lacks it (or lx is NULL). */
int attend_g2p_lexicon_find(const attend_g2p_lexicon *lx, const char *word, size_t len);
/* Word w as stored (lower case; NULL out of range); its pronunciations (0 out
 * of range). */
const char *attend_g2p_lexicon_word(const attend_g2p_lexicon *lx, int w);
int attend_g2p_lexicon_prons(const attend_g2p_lexicon *lx, int w);
/* Pronunciation k (0 = the dictionary's first) of word w: phonemes joined by
 * single spaces into out [cap] (NUL-terminated). ATTEND_ERR_ARG out of
 * range, ATTEND_ERR_CAPACITY when cap is too small. */
attend_status attend_g2p_lexicon_pron(const attend_g2p_lexicon *lx, int w, int k, char *out, size_t cap,
                                      attend_error *err);
/* Phoneme id (0..phonemes-1) as text; NULL out of range. */
const char *attend_g2p_lexicon_phoneme(const attend_g2p_lexicon *lx, int id);
/* Checks that the lexicon speaks the model's phoneme set: stress digits on
 * both or neither, and every phoneme one of the vocabulary's (else
 * ATTEND_ERR_ARG naming label, the phoneme and the first word using it). */
attend_status attend_g2p_lexicon_check_phonemes(const attend_g2p_lexicon *lx, const attend_vocab *phonemes,
                                                const char *label, attend_error *err);

/* ------------------------------------------------------------ IPA */
/*
 * ARPAbet phonemes (space-separated, with or without stress digits 0-2 on the
 * vowels) to IPA, written without separators into out [cap] (UTF-8,
 * NUL-terminated): the table and the stress rule of docs/G2P.md, "IPA
 * output" (ˈ for 1 and ˌ for 2 before the stressed syllable's onset: the
 * longest legal English onset before the vowel; a word's first vowel: all
 * the consonants before it). An unknown phoneme is ATTEND_ERR_ARG naming it
 * and its position; a small cap is ATTEND_ERR_CAPACITY. No allocation;
 * thread-safe.
 */
attend_status attend_g2p_ipa(const char *arpabet, char *out, size_t cap, attend_error *err);

/* ------------------------------------------------------------ running text */
/*
 * Running text (docs/G2P.md, "Running text", states every rule): text [len]
 * (UTF-8; invalid bytes are skipped and reported, never an error) becomes
 * *out, tokens separated by single spaces: a word in lower case ("don't"),
 * a letter to spell as one upper-case letter, perhaps with an apostrophe
 * suffix ("F", "I's"), a minor break "|" and a sentence break "||". Numbers,
 * currency, percent and times are read out; acronyms are spelled unless lx
 * (may be NULL: no lexicon) has them; hyphenated compounds split unless lx
 * has them. *notes (may be NULL: not wanted) gets one line per chunk (run of
 * non-space characters) with unknown characters, each listed once with what
 * was done: "'a<U+00A9>b': U+00A9 skipped", "'中文': U+4E2D kept, U+6587 kept",
 * "byte 0xFF skipped (not UTF-8)". Neither *out nor *notes ever contains a
 * control character (U+0000..U+001F, U+007F..U+009F) or an invalid UTF-8
 * sequence. Both are allocated (free with attend_g2p_text_free); NULL on
 * error (ATTEND_ERR_ALLOC, ATTEND_ERR_NULL). info (may be NULL) gets counts.
 * Reentrant: no state outside the call; lx is only read.
 */
typedef struct {
    int tokens;        /* tokens in *out (breaks included) */
    int words;         /* word tokens */
    int letters;       /* spelled letters */
    int breaks;        /* | and || */
    int noted_chunks;  /* lines of *notes */
} attend_g2p_text_info;

attend_status attend_g2p_text_normalize(const char *text, size_t len, const attend_g2p_lexicon *lx, char **out,
                                        char **notes, attend_g2p_text_info *info, attend_error *err);
void attend_g2p_text_free(char *s); /* NULL is fine */

/* Where a token's pronunciation came from (values pinned). */
typedef enum {
    ATTEND_G2P_SOURCE_LEXICON = 0,        /* the lexicon's first entry */
    ATTEND_G2P_SOURCE_MODEL = 1,          /* the model (greedy) */
    ATTEND_G2P_SOURCE_LETTERS = 2,        /* a letter's name (and its suffix) */
    ATTEND_G2P_SOURCE_LEXICON_SUFFIX = 3, /* a stem from the lexicon + apostrophe suffixes */
    ATTEND_G2P_SOURCE_MODEL_SUFFIX = 4,   /* a stem from the model + apostrophe suffixes */
    ATTEND_G2P_SOURCE_BREAK = 5,          /* "|" or "||": no phonemes */
} attend_g2p_source;
/* "lexicon" "model" "letters" "lexicon+suffix" "model+suffix" "break". */
const char *attend_g2p_source_name(attend_g2p_source s);

/*
 * Pronounces one token of attend_g2p_text_normalize's output into out [cap]
 * (phonemes joined by spaces; "" for a break) and says where it came from:
 * a letter by its name (docs/G2P.md's table; with stress digits when the
 * model's phonemes, or without a model the lexicon's, have them), then its
 * suffixes; a word the lexicon has by its first entry; else apostrophe
 * suffixes ('s 'd 'll 've 're 'm n't) are split off from the right until the
 * stem is in the lexicon or none is left, and the stem (lexicon, else the
 * ensemble of M models, greedy, as attend_g2p_pronounce_ensemble) is
 * followed by each suffix's phonemes chosen by the phoneme before it. M may
 * be 0 (models, graphemes, phonemes NULL): a word the lexicon lacks is then
 * ATTEND_ERR_ARG. lx may be NULL. A token with white space or control
 * characters is ATTEND_ERR_ARG; a small cap ATTEND_ERR_CAPACITY. Not
 * thread-safe on one set of models (as attend_g2p_pronounce).
 */
attend_status attend_g2p_token_pronounce(attend_model *const *models, int M, attend_vocab *graphemes,
                                         const attend_vocab *phonemes, const attend_g2p_lexicon *lx,
                                         const char *token, size_t len, char *out, size_t cap,
                                         attend_g2p_source *source, attend_error *err);

/* 1 when some phoneme of the vocabulary ends in a stress digit ("AH0"): a
 * model trained with keep_stress, whose dictionary must be read that way. */
int attend_g2p_vocab_has_stress(const attend_vocab *phonemes);

#ifdef __cplusplus
}
#endif

#endif /* ATTEND_G2P_H */
