/* model.h: the header model.c owns (one room with it) */
typedef struct { int width; } model_state;
static inline int model_width(const model_state *s) { return s->width; }
int model_forward(int x);
