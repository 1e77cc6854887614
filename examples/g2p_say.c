/* g2p_say.c — pronounce words with the shipped G2P model in a fixed memory
 * budget: every buffer is allocated once when the model loads (capacities:
 * one word of up to 32 letters, up to 32 phonemes); each word then costs no
 * allocation.   usage: g2p_say MODEL WORD...   prints "word PH1 PH2 ..." */
#include <stdio.h>
#include <string.h>

#include <attend.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL WORD...\n", argv[0]);
        return 2;
    }
    attend_model_config cap = {0};
    cap.max_batch = 1;
    cap.max_src_len = 32;
    cap.max_tgt_len = 32;
    attend_model *m = NULL;
    attend_vocab *letters = NULL, *phonemes = NULL;
    attend_error err = {0};
    if (attend_g2p_model_load(&m, argv[1], &cap, &letters, &phonemes, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    char out[33 * (ATTEND_MAX_TOKEN_BYTES + 1)];
    int rc = 0;
    for (int i = 2; i < argc; i++) {
        if (attend_g2p_pronounce(m, letters, phonemes, argv[i], strlen(argv[i]), out, sizeof out, &err)) {
            fprintf(stderr, "%s: %s\n", argv[i], err.msg);
            rc = 1;
        } else {
            printf("%s %s\n", argv[i], out);
        }
    }
    attend_model_free(m);
    attend_vocab_free(letters);
    attend_vocab_free(phonemes);
    return rc;
}
