/* A program outside the project: built against the installed header and
 * library through pkg-config, it must compile, link and compute. */
#include <attend.h>
#include <math.h>
#include <stdio.h>

int main(void) {
    attend_score_config cfg = {ATTEND_SCORE_DOT, 2, 2, 0, 0, 0};
    attend_score_params p = {0};
    float a = (float)log(2.0);
    float q[2] = {1, 0}, h[6] = {a, 0, 0, a, 0, 0}, ctx[2], w[3], ws[64];
    attend_error err;
    if (attend_attention_workspace_size(&cfg, 1, 1, 3) > 64) return 1;
    if (attend_attention_forward(&cfg, &p, ctx, w, q, h, h, NULL, NULL, 0, 1, 1, 3, 2, ws, 64, &err)) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    if (fabsf(w[0] - 0.5f) > 1e-6f || fabsf(ctx[0] - a / 2) > 1e-6f) return 1;
    printf("consumer: attend %s (%s) weights %.4f %.4f %.4f\n", attend_version(),
           attend_gemm_backend(), w[0], w[1], w[2]);
    return 0;
}
