/* precision_align.c - aligns the forward ops of one iteration of a
 * precision run with the reference iteration (the fp32 run's first): a
 * longest common subsequence of op keys (name and scope), so that ops one
 * precision has and another has not (an `aten::contiguous` the fp32
 * attention needs, a cast autocast adds) leave the others mapped.
 *
 * Not here: what is done with the alignment (precision.c makes units of
 * the reference ops every run matches). Cost: the equal prefix and suffix
 * are matched in O(n); the rest by the O(n m) dynamic programme, refused
 * (TS_ERANGE) above TS__PREC_ALIGN_MAX_CELLS cells.
 */
#include <string.h>

#include "replay/precision.h"

uint64_t ts__prec_key(const char *name, const char *scope)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a over "name\0scope" */
    for (const char *p = name; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ULL;
    h = (h ^ 0xffu) * 1099511628211ULL;
    for (const char *p = scope; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ULL;
    return h;
}

int ts__prec_align(const uint64_t *ref, uint32_t n, const uint64_t *seq, uint32_t m, uint32_t *match)
{
    for (uint32_t j = 0; j < m; j++) match[j] = TS_NONE32;
    uint32_t pre = 0, suf = 0;
    while (pre < n && pre < m && ref[pre] == seq[pre]) { match[pre] = pre; pre++; }
    while (suf < n - pre && suf < m - pre && ref[n - 1 - suf] == seq[m - 1 - suf]) {
        match[m - 1 - suf] = n - 1 - suf;
        suf++;
    }
    uint32_t a = n - pre - suf, b = m - pre - suf;   /* the middle: ref[pre, pre+a), seq[pre, pre+b) */
    if (!a || !b) return TS_OK;
    if ((uint64_t)(a + 1) * (b + 1) > TS__PREC_ALIGN_MAX_CELLS) return TS_ERANGE;
    size_t cells = (size_t)(a + 1) * (b + 1);
    uint32_t *L = ts__calloc(cells, sizeof *L);   /* L[i][j]: LCS of ref[pre+i..] and seq[pre+j..] */
    if (!L) return TS_ENOMEM;
#define AT(i, j) L[(size_t)(i) * (b + 1) + (j)]
    for (uint32_t i = a; i-- > 0;)
        for (uint32_t j = b; j-- > 0;)
            AT(i, j) = ref[pre + i] == seq[pre + j] ? AT(i + 1, j + 1) + 1
                     : AT(i + 1, j) > AT(i, j + 1) ? AT(i + 1, j) : AT(i, j + 1);
    for (uint32_t i = 0, j = 0; i < a && j < b;) {
        if (ref[pre + i] == seq[pre + j]) { match[pre + j] = pre + i; i++; j++; }
        else if (AT(i + 1, j) >= AT(i, j + 1)) i++;
        else j++;
    }
#undef AT
    ts__free(L, cells * sizeof *L);
    return TS_OK;
}
