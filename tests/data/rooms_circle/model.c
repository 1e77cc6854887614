/* A planted circle for tools/call_cycles.py (test source_call_cycles_planted):
 * model.c calls encoder.c, and encoder.c reads the state model.h (model.c's
 * header) declares: by the room rule a circle of two rooms. */
#include "model.h"
#include "encoder.h"

int model_forward(int x) { return encoder_forward(x) + 1; }
