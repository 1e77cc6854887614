/*
 * attend/io.h — files and text: safetensors, output paths, vocabularies, datasets and built-in
 * tasks.
 *
 * Part of the public header: include <attend.h> (it includes every part);
 * the conventions every function follows are written at the top of
 * attend/core.h.
 */
#ifndef ATTEND_IO_H
#define ATTEND_IO_H

#include "attend/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ safetensors */
/*
 * The safetensors format: an 8-byte little-endian header length L, L bytes of
 * JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 * ..., "__metadata__": {"key": "value", ...}}, then the data buffer; offsets
 * are relative to the start of the buffer. docs/FORMAT.md describes what we
 * write and what the reader accepts.
 */
typedef enum {
    ATTEND_DTYPE_F32 = 0,
    ATTEND_DTYPE_F64 = 1,
    ATTEND_DTYPE_I32 = 2,
    ATTEND_DTYPE_I64 = 3,
    ATTEND_DTYPE_U8 = 4,
    ATTEND_DTYPE_I8 = 5,  /* quantized weights (attend_model_quantize) */
    ATTEND_DTYPE_F16 = 6, /* IEEE 754 binary16 */
} attend_dtype;

#define ATTEND_MAX_DIMS 8

/* Bytes per element of a dtype; 0 for an unknown one. */
size_t attend_dtype_size(attend_dtype dtype);
/* "F32", "F64", "I32", "I64", "U8", "I8", "F16"; NULL for an unknown dtype. */
const char *attend_dtype_name(attend_dtype dtype);

/* A tensor to write. data holds prod(shape) elements, C-contiguous. */
typedef struct {
    const char *name;  /* unique, 1..255 bytes, not "__metadata__" */
    attend_dtype dtype;
    int ndim;          /* 0..ATTEND_MAX_DIMS (0 = scalar, one element) */
    int64_t shape[ATTEND_MAX_DIMS];
    const void *data;
} attend_st_entry;

/* One metadata pair (both NUL-terminated UTF-8; escaped as JSON strings). */
typedef struct {
    const char *key;
    const char *value;
} attend_st_meta;

/*
 * Writes a safetensors file atomically: to "<path>.tmp.<pid>", fsync, rename
 * over path, fsync of the directory. On any error the previous file at path is
 * untouched and the temporary file removed. Tensors are stored contiguously in
 * the order given; the JSON header is padded with spaces to a multiple of 8 bytes.
 * An existing path that is not a regular file (a device, FIFO, socket,
 * directory) is refused with ATTEND_ERR_IO and left alone: renaming over it
 * would replace it. Before writing, temporaries of path left by processes that
 * are gone are removed (attend_output_clean_stale). A write that fails with
 * EFBIG needs SIGXFSZ ignored by the program (its default action kills the
 * process before the error can be reported or the temporary removed).
 */
attend_status attend_st_write(const char *path, const attend_st_entry *entries, int n_entries,
                              const attend_st_meta *meta, int n_meta, attend_error *err);

/* A parsed file (opaque). Tensors point into memory the handle owns. */
typedef struct attend_st_file attend_st_file;

/* A tensor as read. */
typedef struct {
    const char *name;
    attend_dtype dtype;
    int ndim;
    int64_t shape[ATTEND_MAX_DIMS];
    size_t nbytes;
    const void *data; /* inside the handle's buffer; may be unaligned for the dtype: memcpy it */
} attend_st_tensor;

/*
 * Reads and validates a whole file (at most max_bytes; 0 = 1 GiB): header
 * length within the file, JSON well-formed (strict: strings, numbers, no
 * duplicate names), known dtypes, 0..8 non-negative dims, offsets in bounds,
 * nbytes == prod(shape) * dtype size without overflow, tensors contiguous,
 * non-overlapping and covering the buffer exactly, metadata values strings.
 * Errors name the file, the tensor and the problem. *out is NULL on error.
 */
attend_status attend_st_open(attend_st_file **out, const char *path, size_t max_bytes,
                             attend_error *err);
/* The same from memory (copied); label names the source in messages. */
attend_status attend_st_parse(attend_st_file **out, const void *bytes, size_t len,
                              const char *label, attend_error *err);
void attend_st_close(attend_st_file *f); /* NULL is fine */
int attend_st_count(const attend_st_file *f);
/* i-th tensor in file order; NULL when out of range. */
const attend_st_tensor *attend_st_get(const attend_st_file *f, int i);
/* Tensor by name; NULL when absent. */
const attend_st_tensor *attend_st_find(const attend_st_file *f, const char *name);
/* Metadata value for key; NULL when absent. */
const char *attend_st_metadata(const attend_st_file *f, const char *key);

/* ------------------------------------------------------------ output files */
/*
 * Checks a program makes on the files it will write before it starts any
 * work, so that an unusable output is found in a second, not after hours of
 * training. Not thread-safe against other processes changing the directory.
 */

/* attend_output_check flag: an existing non-regular target (a device, a
 * FIFO) is accepted, for a caller that writes it in place. */
#define ATTEND_OUTPUT_ALLOW_SPECIAL 1u

/* OK when path can be written as attend_st_write writes it: an existing path
 * must be a regular file (without ATTEND_OUTPUT_ALLOW_SPECIAL; a directory and
 * a socket, which open(2) cannot open, are always refused), and
 * "<path>.tmp.<pid>" can be created beside it (it is created and removed
 * again). Otherwise ATTEND_ERR_IO naming path and the
 * reason (missing or read-only directory, name too long, "is a character
 * device"). Nothing else in the file system changes. */
attend_status attend_output_check(const char *path, unsigned flags, attend_error *err);

/* *same = 1 when a and b name the same file: for two existing files the same
 * device and inode (hard and symbolic links included), for two files not yet
 * there the same real directory and name; an existing file and a missing one
 * are different. */
attend_status attend_path_same(const char *a, const char *b, int *same, attend_error *err);

/* One file a program reads (output = 0) or writes (output = 1); role names it
 * in messages ("--out"); flags are an output's attend_output_check flags. A
 * NULL path is ignored. */
typedef struct {
    const char *path;
    const char *role;
    int output;
    unsigned flags;
} attend_path_use;

/* Refuses (ATTEND_ERR_ARG) any output that is the same file (attend_path_same)
 * as an input or another output, naming both roles and paths, the first such
 * pair in order; then attend_output_check(path, flags) on every output. */
attend_status attend_paths_check(const attend_path_use *uses, int n, attend_error *err);

/* Removes the regular files "<path>.tmp.<pid>" (decimal pid) in path's
 * directory whose process no longer exists: the leftovers of a writer killed
 * mid-write (they are never read as the file). fn (may be NULL) is called for
 * each with its name and pid; *removed (may be NULL) receives the count. An
 * unreadable directory removes nothing and is not an error. */
typedef void (*attend_stale_fn)(void *ctx, const char *file, long pid);
attend_status attend_output_clean_stale(const char *path, attend_stale_fn fn, void *ctx, int *removed,
                                        attend_error *err);

/*
 * The one writer of every file attend writes (src/io/outfile.c). A regular
 * (or missing) target is written through a temporary "<path>.tmp.<pid>" in the
 * same directory, created with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0666 less the
 * umask; whatever is already at that name, such as a planted symbolic link,
 * is removed, never followed); commit flushes, fsyncs, renames it over path and
 * fsyncs the directory. Until the rename the previous file is untouched; on
 * any failure the temporary is removed and the message names the file and
 * the system's reason ("cannot write 'a.svg.tmp.123': No space left on
 * device"). Temporaries of path left by dead processes are removed first
 * (attend_output_clean_stale).
 * An existing target that is not a regular file (a FIFO, a device, a link
 * into /proc such as /dev/stdout) is written in place with
 * ATTEND_OUTPUT_ALLOW_SPECIAL and refused (ATTEND_ERR_IO) without it; a
 * directory is always refused. Writes are buffered (64 KiB). A handle is for
 * one thread; commit and abort free it (abort(NULL) is fine).
 */
typedef struct attend_outfile attend_outfile;
attend_status attend_outfile_open(attend_outfile **out, const char *path, unsigned flags, attend_error *err);
attend_status attend_outfile_write(attend_outfile *f, const void *data, size_t n, attend_error *err);
attend_status attend_outfile_commit(attend_outfile *f, attend_error *err);
void attend_outfile_abort(attend_outfile *f);
/* 1 when path exists as something attend_outfile_open would write in place
 * (a FIFO, a device, a link into /proc), else 0. */
int attend_outfile_in_place(const char *path);
/* open + write + commit of data [n] (NULL when n is 0). */
attend_status attend_file_write(const char *path, const void *data, size_t n, unsigned flags, attend_error *err);

/* OK when the file system holding path (its directory) has at least `bytes`
 * free for this user (statvfs: f_bavail * f_frsize); else ATTEND_ERR_IO
 * naming path, the free and the needed bytes. *free_bytes (may be NULL)
 * receives the free space (UINT64_MAX when it cannot be known: no error
 * then). */
attend_status attend_output_space(const char *path, uint64_t bytes, uint64_t *free_bytes, attend_error *err);

/* A lock file "<path>.lock" that marks path as in use by one process
 * (src/io/lock.c): the lock is an fcntl write lock (F_SETLK) on the lock file,
 * held until attend_lock_release or the process ends (a killed process never
 * leaves a held lock); the file holds the owner's pid. A lock held by another
 * process is ATTEND_ERR_IO naming it ("'m.safetensors' is in use by process
 * 123 (lock file m.safetensors.lock)"); a lock file whose process is gone is
 * taken over (*stale_pid receives that pid, else 0; may be NULL). Release
 * removes the lock file. Locks are per process: a second acquire of the same
 * path in one process is refused. */
typedef struct attend_lock attend_lock;
attend_status attend_lock_acquire(attend_lock **out, const char *path, long *stale_pid, attend_error *err);
void attend_lock_release(attend_lock *l); /* NULL is fine */

/* ----------------------------------------------------------- visible text */
/* The one escaping of text for a terminal: copies s [n] to dst [cap] with
 * every control character made visible, so that text from a user or a file
 * cannot move the cursor, clear the screen or fake a message line: C0 bytes
 * and DEL as "\x1b", C1 control code points (U+0080..U+009F) as "\u009b",
 * bytes that are not UTF-8 as "\xff"; everything else, backslashes included,
 * unchanged. Always NUL-terminates when cap > 0 (truncating); returns the
 * length of the whole escaped text (as snprintf). Thread-safe. */
size_t attend_text_visible(char *dst, size_t cap, const char *s, size_t n);

/* ------------------------------------------------------------- vocabulary */
/* Every vocabulary starts with these four tokens, at these ids. */
#define ATTEND_PAD 0 /* "<pad>" */
#define ATTEND_BOS 1 /* "<bos>" */
#define ATTEND_EOS 2 /* "<eos>" */
#define ATTEND_UNK 3 /* "<unk>" */
#define ATTEND_MAX_TOKEN_BYTES 64

typedef enum {
    ATTEND_TOKENIZE_CHAR = 0,  /* one token per UTF-8 code point */
    ATTEND_TOKENIZE_SPACE = 1, /* tokens separated by runs of ASCII spaces */
} attend_tokenizer;

typedef struct attend_vocab attend_vocab; /* token strings <-> ids (opaque) */

/* A vocabulary holding only the four special tokens. */
attend_status attend_vocab_create(attend_vocab **out, attend_error *err);
void attend_vocab_free(attend_vocab *v); /* NULL is fine */
int attend_vocab_size(const attend_vocab *v);
/* Adds token (len bytes, valid UTF-8, 1..ATTEND_MAX_TOKEN_BYTES, no NUL, tab or
 * newline) unless present; *id (may be NULL) receives its id either way. */
attend_status attend_vocab_add(attend_vocab *v, const char *token, size_t len, int32_t *id,
                               attend_error *err);
/* Id of token, or -1 when absent. */
int32_t attend_vocab_find(const attend_vocab *v, const char *token, size_t len);
/* NUL-terminated token of id, or NULL when out of range. */
const char *attend_vocab_token(const attend_vocab *v, int32_t id);

/* Splits text (len bytes) into tokens and maps them to ids [max_ids]; unknown
 * tokens become ATTEND_UNK, or are added when grow != 0. Invalid UTF-8 is
 * ATTEND_ERR_FORMAT with the byte offset; more than max_ids tokens is
 * ATTEND_ERR_CAPACITY. */
attend_status attend_vocab_encode(attend_vocab *v, attend_tokenizer tok, int grow,
                                  const char *text, size_t len, int32_t *ids, int max_ids,
                                  int *n_ids, attend_error *err);
/* Writes the tokens of ids[0..n) into buf (cap bytes, NUL-terminated), joined
 * with nothing (CHAR) or one space (SPACE); stops at ATTEND_EOS, skips PAD and
 * BOS. Too small a buffer is ATTEND_ERR_CAPACITY. */
attend_status attend_vocab_decode(const attend_vocab *v, attend_tokenizer tok, const int32_t *ids,
                                  int n, char *buf, size_t cap, attend_error *err);
/* attend_vocab_decode for copy models (attend/seq2seq.h, "Copy"): an id >=
 * the vocabulary's size V is the copy of source token id − V of src_text
 * (src_len bytes, tokenized by tok), written as that token's text. An id
 * beyond the source's tokens is ATTEND_ERR_ARG naming it; invalid UTF-8 in
 * src_text ATTEND_ERR_FORMAT; too small a buffer ATTEND_ERR_CAPACITY. */
attend_status attend_vocab_decode_copy(const attend_vocab *v, attend_tokenizer tok, const int32_t *ids, int n,
                                       const char *src_text, size_t src_len, char *buf, size_t cap,
                                       attend_error *err);
/* The byte span (*start, *tlen) of token j (0-based) of text [len] split by
 * tok (attend_vocab_encode's rules): how a caller finds the source token a
 * copied id names. ATTEND_ERR_ARG when the text has no token j. */
attend_status attend_text_token(attend_tokenizer tok, const char *text, size_t len, int j, size_t *start,
                                size_t *tlen, attend_error *err);
/* The vocabulary as a JSON array of strings (in id order), malloc'ed into *json
 * (caller frees), and back. Parsing checks the four specials come first. */
attend_status attend_vocab_to_json(const attend_vocab *v, char **json, attend_error *err);
attend_status attend_vocab_from_json(attend_vocab **out, const char *json, attend_error *err);

/* ---------------------------------------------------------------- datasets */
/* Pairs of token-id sequences (source without BOS/EOS; target without BOS/EOS:
 * the model adds them). For pointer tasks the target ids are source positions. */
typedef struct attend_dataset attend_dataset;

attend_status attend_dataset_create(attend_dataset **out, attend_error *err);
void attend_dataset_free(attend_dataset *d); /* NULL is fine */
int attend_dataset_size(const attend_dataset *d);
/* Longest source / target in the dataset (0 when empty). */
int attend_dataset_max_src_len(const attend_dataset *d);
int attend_dataset_max_tgt_len(const attend_dataset *d);
/* Appends a copy of one pair (both lengths >= 1). */
attend_status attend_dataset_add(attend_dataset *d, const int32_t *src, int src_len,
                                 const int32_t *tgt, int tgt_len, attend_error *err);
/* Pointers into the dataset's storage for pair i (valid until the next add or free). */
attend_status attend_dataset_get(const attend_dataset *d, int i, const int32_t **src, int *src_len,
                                 const int32_t **tgt, int *tgt_len, attend_error *err);

/*
 * Word alignments (guided alignment training: attend_model_set_guided_alignment).
 * A pair may carry an alignment: links [n_links, 2] of (source position i,
 * target position j), 0-based, 0 <= i < its source length, 0 <= j < its target
 * length (the TSV's third column "i-j ..."); n_links may be 0 (an alignment with
 * no links), and a repeated link is kept (training counts it once). attend_dataset_set_alignment copies them, replacing the pair's
 * earlier alignment; ATTEND_ERR_ARG names a link outside the pair. Not
 * thread-safe with other calls that change d.
 */
attend_status attend_dataset_set_alignment(attend_dataset *d, int i, const int32_t *links, int n_links,
                                           attend_error *err);
/* Pair i's alignment: *links points into the dataset's storage (valid until the
 * next change or free; NULL when there are no links), *n_links is their count,
 * or -1 when the pair carries no alignment. */
attend_status attend_dataset_get_alignment(const attend_dataset *d, int i, const int32_t **links, int *n_links,
                                           attend_error *err);
/* How many pairs carry an alignment (0 for NULL). */
int attend_dataset_aligned_pairs(const attend_dataset *d);

typedef enum {
    ATTEND_TASK_COPY = 0,    /* target = source */
    ATTEND_TASK_REVERSE = 1, /* target = source reversed */
    ATTEND_TASK_SORT = 2,    /* pointer task: target = source positions in ascending
                                order of their symbols (stable) */
    ATTEND_TASK_BAG = 3,     /* target = the source symbols in ascending order: a
                                function of the bag (multiset) of symbols alone,
                                whatever their order (seed 002's order-blind
                                self-attention can solve it) */
    ATTEND_TASK_SHIFT = 4,   /* a labelling (one label per source position, for
                                ATTEND_DECODER_READOUT): label i = source symbol
                                i - shift, the blank "_" for i < shift; generated by
                                attend_dataset_shift_task (it needs the shift) */
} attend_task;

typedef struct {
    attend_task task;
    int symbols;      /* distinct source symbols, named "a", "b", ... then "s26", "s27", ... */
    int min_len;      /* 1 <= min_len <= max_len */
    int max_len;
    int count;        /* pairs to generate */
    uint64_t seed;    /* same seed → same pairs */
} attend_task_config;

/* Generates a built-in task. *vocab gets the symbol vocabulary (specials +
 * symbols), used for both sides of copy/reverse and for the source of sort.
 * Every pair carries its alignment: one link i-j per target token j, from the
 * source position it comes from (copy i = j, reverse i = L-1-j, sort i = tgt[j]). */
attend_status attend_dataset_task(attend_dataset **out, attend_vocab **vocab,
                                  const attend_task_config *cfg, attend_error *err);
/* Generates ATTEND_TASK_SHIFT (cfg->task must be it): label i of a source of
 * length L is symbol i - shift (0 <= shift < 100000), or the blank for i < shift:
 * a path of length `shift` between the two positions (seed 002's Table 8.1).
 * *vocab holds the specials, the symbols, then the blank "_" (id 4 + symbols,
 * never in a source). Pairs carry the alignment i-shift -> i (none for blanks).
 * Errors as attend_dataset_task's; ATTEND_ERR_ARG for another task or a shift
 * out of range (naming it). */
attend_status attend_dataset_shift_task(attend_dataset **out, attend_vocab **vocab, const attend_task_config *cfg,
                                        int shift, attend_error *err);

#define ATTEND_TSV_MAX_LINE_BYTES (1 << 20) /* the largest max_line_bytes */
#define ATTEND_TSV_MAX_SKIP_BYTES (1 << 24) /* a skipped line must end within this */

typedef struct {
    attend_tokenizer tokenizer;
    int max_line_bytes;  /* longer lines are malformed; 0 = 4096; at most ATTEND_TSV_MAX_LINE_BYTES */
    int max_tokens;      /* more tokens on one side is malformed; 0 = 256 */
    int skip_malformed;  /* 0: first malformed line is an error; 1: skip and count */
    int copy;            /* 1 (copy models, attend/seq2seq.h): a target token absent from tgt_vocab that
                            occurs in the line's source becomes the copied id Vt + j, j the first
                            source token with the same text, Vt = tgt_vocab's final size (or the
                            target id the source token maps to). With grow, such tokens are not added
                            to tgt_vocab: it holds only the target tokens that occur somewhere
                            without being in their line's source */
} attend_tsv_options;

/*
 * Reads "source<TAB>target" lines (LF or CRLF; the last line may lack its
 * newline) from path, or from standard input when path is "-" (named
 * "<stdin>" in messages; not closed). Blank lines (empty, or spaces and tabs)
 * at the end of the input are ignored; one followed by a pair is malformed
 * ("blank line ...", counted as skipped with skip_malformed). A line
 * may have a third column, "source<TAB>target<TAB>alignment": links "i-j"
 * (source token i, target token j, 0-based) separated by spaces, e.g.
 * "0-0 1-2 2-1", which the pair then carries (attend_dataset_get_alignment;
 * an empty third column is an alignment with no links, a line without one
 * carries none).
 * Malformed: missing tab, extra tab field (a fourth column), empty side,
 * invalid UTF-8, over-long line, too many tokens, an alignment column that is
 * not i-j links or names a token outside the line's source or target (the
 * message quotes the link). The error names path:line and the reason; with
 * skip_malformed the line is skipped and counted in *skipped (may be NULL).
 * The reader never holds more than max_line_bytes of a line: an over-long line
 * is found as soon as its first max_line_bytes + 1 bytes are read. Skipping
 * one reads on to its end, but a line with no LF within
 * ATTEND_TSV_MAX_SKIP_BYTES is an error even with skip_malformed (so endless
 * input such as /dev/zero fails at once instead of being read for ever).
 * A read error (EIO, EISDIR) is ATTEND_ERR_IO naming path:line and the cause.
 * Tokens are added to src_vocab / tgt_vocab when grow != 0 (training data),
 * else unknown tokens map to ATTEND_UNK (evaluation data). The two vocab
 * pointers may be the same vocabulary.
 */
attend_status attend_dataset_read_tsv(attend_dataset **out, const char *path,
                                      attend_vocab *src_vocab, attend_vocab *tgt_vocab, int grow,
                                      const attend_tsv_options *opt, int *skipped,
                                      attend_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ATTEND_IO_H */
