/* The digits data set for the C examples: data/digits.csv.gz (UCI handwritten digits, 8x8 pixels 0..16 and a label
 * per line) read with zlib, and a fixed-seed shuffle so that runs are reproducible. Header-only (static functions):
 * each example is one C file plus this header. */
#ifndef EMBER_EXAMPLES_DIGITS_DATA_H
#define EMBER_EXAMPLES_DIGITS_DATA_H
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#define PIXELS 64
#define CLASSES 10

typedef struct {
  float* x;      /* [n, 64], pixel / 16 */
  int64_t* y;    /* [n] */
  size_t n;
} dataset;

static int load_digits(const char* path, dataset* d) {
  gzFile f = gzopen(path, "rb");
  char line[1024];
  size_t cap = 2048;
  if (!f) return 0;
  d->x = malloc(cap * PIXELS * sizeof(float));
  d->y = malloc(cap * sizeof(int64_t));
  d->n = 0;
  while (gzgets(f, line, sizeof line)) {
    char* p = line;
    int v[PIXELS + 1], k;
    for (k = 0; k <= PIXELS; ++k) {
      char* end;
      v[k] = (int)strtol(p, &end, 10);
      if (end == p) break;
      p = *end == ',' ? end + 1 : end;
    }
    if (k != PIXELS + 1) continue; /* blank or malformed line */
    if (d->n == cap) {
      cap *= 2;
      d->x = realloc(d->x, cap * PIXELS * sizeof(float));
      d->y = realloc(d->y, cap * sizeof(int64_t));
    }
    for (k = 0; k < PIXELS; ++k) d->x[d->n * PIXELS + k] = (float)v[k] / 16.0f;
    d->y[d->n++] = v[PIXELS];
  }
  gzclose(f);
  return d->n > 0;
}

/* xorshift64*: a fixed-seed shuffle, so runs are reproducible. */
static uint64_t rng_state = 2024;
static uint64_t rng_next(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static void shuffle(size_t* idx, size_t n) {
  for (size_t i = n; i > 1; --i) {
    size_t j = (size_t)(rng_next() % i), t = idx[i - 1];
    idx[i - 1] = idx[j];
    idx[j] = t;
  }
}

#endif /* EMBER_EXAMPLES_DIGITS_DATA_H */
