/*
 * g2p_internal.h — what the G2P files of src/tasks share: the dictionary's
 * storage (g2p.c parses and owns it; g2p_lexicon.c turns one into a lexicon)
 * and its builder.
 *
 * Storage: every string (words, pronunciations) in one growing text arena
 * addressed by offsets; entries [n] (word, pronunciation offset), sorted into
 * word order by at_g2p_dict_finish so that a word's pronunciations are
 * contiguous; words [nw] (text offset, first entry, count). A hash table of
 * word ids (open addressing, linear probing, at most half full) finds a word.
 */
#ifndef ATTEND_TASKS_G2P_INTERNAL_H
#define ATTEND_TASKS_G2P_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "attend.h"

typedef struct {
    int word;      /* word id */
    int order;     /* position in the file, for a stable sort */
    int prev;      /* while parsing: the word's previous entry, or -1 */
    size_t pron;   /* offset of the pronunciation in text */
} g2p_entry;

typedef struct {
    size_t text;   /* offset of the word in text */
    int first;     /* first entry (after sorting); while parsing: the newest, or -1 */
    int count;     /* entries */
} g2p_word;

struct attend_g2p_dict {
    char *text;            /* [text_cap]: NUL-terminated strings */
    size_t text_len, text_cap;
    g2p_entry *entries;    /* [entries_cap] */
    size_t n, entries_cap;
    g2p_word *words;       /* [words_cap] */
    size_t nw, words_cap;
    int32_t *slots;        /* [nslots] word id or -1 */
    size_t nslots;
    attend_g2p_dict_info info;
};

/* An empty dictionary under construction (NULL when out of memory). */
attend_g2p_dict *at_g2p_dict_new(void);
/* Adds word [wlen] with the pronunciation pron [plen] (phonemes joined by
 * single spaces) unless the word already has it (*dup = 1 then); 0 when out
 * of memory. Before at_g2p_dict_finish only. */
int at_g2p_dict_add(attend_g2p_dict *d, const char *word, size_t wlen, const char *pron, size_t plen, int *dup);
/* Sorts the entries into word order (each word's in the order they were
 * added) and sets info.entries / info.words; the dictionary is then read-only. */
void at_g2p_dict_finish(attend_g2p_dict *d);
/* Id of word [len], or -1 when it has none. */
int at_g2p_dict_find(const attend_g2p_dict *d, const char *word, size_t len);
/* 1 when word (NUL-terminated) is in split (ALL: every word). */
int at_g2p_in_split(const char *word, attend_g2p_split split);
/* The FNV-1a 64 hash then the splitmix64 finaliser: the split's and the
 * hash tables' hash of a byte string. */
/* Greedy decoding of nb encoded words (rows of width S in src, repacked in
 * place to the longest word's width) by one model (M == 1) or an ensemble. */
attend_status at_g2p_greedy_rows(attend_model *const *models, int M, int32_t *src, const int *src_len, int nb, int S,
                                 int L, int32_t *out, int *out_len, attend_error *err);

uint64_t at_g2p_hash(const char *s, size_t len);

#endif
