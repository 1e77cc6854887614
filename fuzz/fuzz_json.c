/*
 * fuzz_json.c — the JSON texts a model file's metadata holds, parsed on their
 * own: the model configuration (attend_model_config_from_json) and a
 * vocabulary (attend_vocab_from_json). The first input byte picks which; the
 * rest is the text. Invariants: an accepted configuration passes
 * attend_model_config_check and survives to_json/from_json unchanged; an
 * accepted vocabulary starts with the four specials, finds each token at its
 * id, and survives to_json/from_json unchanged; a refusal sets no output.
 */
#include "fuzz.h"

#include "attend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    attend_error err;
    if (data[0] & 1) {
        attend_model_config c, c2;
        memset(&c, 0x5a, sizeof c);
        memset(&c2, 0, sizeof c2);
        /* the length excludes the NUL: bytes after an embedded NUL are text too */
        attend_status st = attend_model_config_from_json(&c, text, size - 1, &err);
        if (st == ATTEND_OK) {
            FUZZ_CHECK(attend_model_config_check(&c, &err) == ATTEND_OK, "accepted config fails the check: %s", err.msg);
            char *j = NULL;
            FUZZ_CHECK(attend_model_config_to_json(&c, &j, &err) == ATTEND_OK, "to_json: %s", err.msg);
            FUZZ_CHECK(attend_model_config_from_json(&c2, j, strlen(j), &err) == ATTEND_OK, "round trip: %s", err.msg);
            FUZZ_CHECK(!memcmp(&c, &c2, sizeof c), "config changed in a round trip");
            free(j);
        } else {
            fuzz_check_message(err.msg, NULL);
            attend_model_config z;
            memset(&z, 0x5a, sizeof z);
            FUZZ_CHECK(!memcmp(&c, &z, sizeof c), "a refused config was written");
        }
    } else {
        attend_vocab *v = (attend_vocab *)(uintptr_t)1;
        attend_status st = attend_vocab_from_json(&v, text, &err);
        if (st == ATTEND_OK) {
            int n = attend_vocab_size(v);
            FUZZ_CHECK(n >= 4, "size %d", n);
            FUZZ_CHECK(!strcmp(attend_vocab_token(v, ATTEND_PAD), "<pad>") && !strcmp(attend_vocab_token(v, ATTEND_UNK), "<unk>"),
                       "specials");
            for (int i = 0; i < n; i++) {
                const char *t = attend_vocab_token(v, i);
                FUZZ_CHECK(t && attend_vocab_find(v, t, strlen(t)) == i, "token %d is not found at its id", i);
            }
            char *j = NULL;
            FUZZ_CHECK(attend_vocab_to_json(v, &j, &err) == ATTEND_OK, "to_json: %s", err.msg);
            attend_vocab *w = NULL;
            FUZZ_CHECK(attend_vocab_from_json(&w, j, &err) == ATTEND_OK, "round trip: %s", err.msg);
            FUZZ_CHECK(attend_vocab_size(w) == n, "round trip size");
            for (int i = 0; i < n; i++)
                FUZZ_CHECK(!strcmp(attend_vocab_token(v, i), attend_vocab_token(w, i)), "round trip token %d", i);
            attend_vocab_free(w);
            free(j);
            attend_vocab_free(v);
        } else {
            FUZZ_CHECK(v == NULL, "refused, but a vocabulary was returned");
            fuzz_check_message(err.msg, NULL);
        }
    }
    free(text);
    return 0;
}
