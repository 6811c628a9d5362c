/* ctf_check.c - the check of a CTF trace's packets that runs before
 * libbabeltrace2 reads it: each data stream's packet headers and contexts,
 * read at the offsets its metadata gives, for the values libbabeltrace2
 * 2.0.4 cannot survive. A timestamp_begin, timestamp_end or packet_seq_num
 * with every bit set (its "unset" value) makes it abort the process
 * (msg-iter.c create_msg_packet_beginning, check_emit_msg_discarded_packets)
 * and a packet_size of 0 makes it loop, allocating without end. Such a trace
 * is refused here: "FILE: byte N: what", TS_EPARSE.
 *
 * Not for: decoding events or validating what babeltrace reports cleanly
 * (ctf.c). Reads the subset of TSDL that packet layouts use: integer
 * typealiases, named and inline structs of integers and integer arrays,
 * align(N), the trace's byte_order, packet.header and each stream's id and
 * packet.context; metadata in plain text or in LTTng's packetized form. A
 * header or context holding anything else (an enum, a variant, a string, a
 * nested struct) leaves its trace unchecked, exactly as before this file.
 * Only each packet's first bytes are read (pread), never its events.
 */
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/ingest.h"

enum { F_MAGIC, F_STREAM_ID, F_PACKET_SIZE, F_CONTENT_SIZE, F_TS_BEGIN, F_TS_END, F_SEQ, F_N };
static const char *const field_names[F_N] = {"magic", "stream_id", "packet_size", "content_size",
                                             "timestamp_begin", "timestamp_end", "packet_seq_num"};

enum { MAX_TOKENS = 1 << 20, MAX_ALIASES = 256, MAX_STRUCTS = 128, MAX_STREAMS = 64, NAME_MAX_LEN = 64 };

typedef struct tok { const char *p; uint32_t n; } tok;
typedef struct alias { char name[NAME_MAX_LEN]; uint32_t size, align; int order; } alias;   /* order: 0 native, 1 le, 2 be */
typedef struct named { char name[NAME_MAX_LEN]; uint32_t at; } named;                    /* token of its '{' */
typedef struct stream_decl { int64_t id; uint32_t ctx_at; bool has_id, has_ctx; } stream_decl;

typedef struct meta {
    tok *t;
    uint32_t n, cap;
    alias aliases[MAX_ALIASES];
    uint32_t n_aliases;
    named structs[MAX_STRUCTS];
    uint32_t n_structs;
    stream_decl streams[MAX_STREAMS];
    uint32_t n_streams;
    uint32_t header_at;
    bool has_header, big_endian;
} meta;

/* ---- tokens ---- */

static bool is_ident(char c, bool first)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* Identifiers, numbers, strings, ":=", "..." and single punctuation; comments
 * skipped. Returns false when there are more tokens than m->cap. */
static bool tokenize(meta *m, const char *s, size_t len)
{
    m->n = 0;
    for (size_t i = 0; i < len;) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '\0') { i++; continue; }
        if (c == '/' && i + 1 < len && s[i + 1] == '*') {
            const char *e = memmem(s + i + 2, len - i - 2, "*/", 2);
            i = e ? (size_t)(e - s) + 2 : len;
            continue;
        }
        if (c == '/' && i + 1 < len && s[i + 1] == '/') {
            while (i < len && s[i] != '\n') i++;
            continue;
        }
        size_t j = i + 1;
        if (is_ident(c, true) || (c >= '0' && c <= '9'))
            while (j < len && (is_ident(s[j], false))) j++;
        else if (c == '"') {
            while (j < len && s[j] != '"') j += (s[j] == '\\' && j + 1 < len) ? 2 : 1;
            j = j < len ? j + 1 : len;
        } else if (c == ':' && j < len && s[j] == '=')
            j++;
        else if (c == '.' && j + 1 < len && s[j] == '.' && s[j + 1] == '.')
            j += 2;
        if (m->n == m->cap) return false;
        m->t[m->n++] = (tok){s + i, (uint32_t)(j - i)};
        i = j;
    }
    return true;
}

static bool is(const meta *m, uint32_t i, const char *w)
{
    return i < m->n && m->t[i].n == strlen(w) && memcmp(m->t[i].p, w, m->t[i].n) == 0;
}

/* The token after the bracket that closes the one at i ({, [ or (). */
static uint32_t skip_group(const meta *m, uint32_t i)
{
    int depth = 0;
    for (; i < m->n; i++) {
        char c = m->t[i].n == 1 ? m->t[i].p[0] : 0;
        if (c == '{' || c == '[' || c == '(') depth++;
        if ((c == '}' || c == ']' || c == ')') && --depth <= 0) return i + 1;
    }
    return m->n;
}

/* The token after the ';' that ends the statement starting at i. */
static uint32_t skip_statement(const meta *m, uint32_t i)
{
    while (i < m->n && !is(m, i, ";")) i = (is(m, i, "{") || is(m, i, "(") || is(m, i, "[")) ? skip_group(m, i) : i + 1;
    return i < m->n ? i + 1 : m->n;
}

static bool number(const meta *m, uint32_t i, uint64_t *v)
{
    if (i >= m->n || m->t[i].n == 0 || m->t[i].n > 20 || m->t[i].p[0] < '0' || m->t[i].p[0] > '9') return false;
    char b[24], *end;
    memcpy(b, m->t[i].p, m->t[i].n);
    b[m->t[i].n] = 0;
    *v = strtoull(b, &end, 0);
    return *end == 0 || *end == 'u' || *end == 'U' || *end == 'l' || *end == 'L';
}

/* ---- types ---- */

/* `integer { size = N; align = A; byte_order = O; ... }` at i. */
static bool parse_integer(const meta *m, uint32_t i, alias *a, uint32_t *next)
{
    if (!is(m, i, "integer") || !is(m, i + 1, "{")) return false;
    uint32_t end = skip_group(m, i + 1);
    bool have_align = false;
    a->size = 0, a->order = 0;
    for (uint32_t k = i + 2; k + 2 < end; k++) {
        if (!is(m, k + 1, "=")) continue;
        uint64_t v;
        if (is(m, k, "size") && number(m, k + 2, &v) && v >= 1 && v <= 64) a->size = (uint32_t)v;
        else if (is(m, k, "align") && number(m, k + 2, &v) && v >= 1 && v <= 4096) a->align = (uint32_t)v, have_align = true;
        else if (is(m, k, "byte_order"))
            a->order = is(m, k + 2, "le") ? 1 : (is(m, k + 2, "be") || is(m, k + 2, "network")) ? 2 : 0;
    }
    if (!have_align) a->align = a->size % 8 ? 1 : 8;
    *next = end;
    return a->size > 0;
}

static const alias *find_alias(const meta *m, const char *name)
{
    for (uint32_t i = m->n_aliases; i-- > 0;)
        if (!strcmp(m->aliases[i].name, name)) return &m->aliases[i];
    return NULL;
}

/* Tokens [from, to) joined by single spaces ("unsigned long"); false when too long. */
static bool join_words(const meta *m, uint32_t from, uint32_t to, char *out)
{
    size_t n = 0;
    out[0] = 0;
    for (uint32_t k = from; k < to; k++) {
        if (!is_ident(m->t[k].p[0], true) || n + m->t[k].n + 2 > NAME_MAX_LEN) return false;
        if (n) out[n++] = ' ';
        memcpy(out + n, m->t[k].p, m->t[k].n);
        n += m->t[k].n;
        out[n] = 0;
    }
    return n > 0;
}

typedef struct field_at { uint32_t off, size; bool be, present; } field_at;
typedef struct layout { uint32_t bits, align; field_at f[F_N]; } layout;

static uint32_t align_up(uint32_t v, uint32_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

/* One declaration of a struct body at i: an integer (inline or an alias),
 * optionally an array of a number of them. Adds it to L; false for anything
 * else. */
static bool parse_field(const meta *m, uint32_t i, uint32_t end, layout *L, uint32_t *next)
{
    alias a = {{0}, 0, 0, 0};
    uint32_t k;
    if (is(m, i, "integer")) {
        if (!parse_integer(m, i, &a, &k)) return false;
    } else {
        k = i;
        while (k < end && !is(m, k, ";") && !is(m, k, "[")) k++;
        char name[NAME_MAX_LEN];
        const alias *found;
        if (k < i + 2 || !join_words(m, i, k - 1, name) || !(found = find_alias(m, name))) return false;
        a = *found;
        k--;
    }
    if (k >= m->n || !is_ident(m->t[k].p[0], true)) return false;
    uint32_t name_at = k++;
    uint64_t count = 1;
    if (is(m, k, "[")) {
        if (!number(m, k + 1, &count) || !is(m, k + 2, "]") || count > 65536) return false;
        k += 3;
    }
    if (k >= end || !is(m, k, ";")) return false;
    L->bits = align_up(L->bits, a.align);
    if (a.align > L->align) L->align = a.align;
    for (int f = 0; f < F_N; f++)
        if (m->t[name_at].n == strlen(field_names[f]) && !memcmp(m->t[name_at].p, field_names[f], m->t[name_at].n) &&
            count == 1)
            L->f[f] = (field_at){L->bits, a.size, a.order == 2 || (a.order == 0 && m->big_endian), true};
    if ((uint64_t)L->bits + count * a.size > (1u << 24)) return false;
    L->bits += (uint32_t)(count * a.size);
    *next = k + 1;
    return true;
}

/* The struct type at i (`struct { ... } [align(N)]` or `struct NAME`). */
static bool parse_struct(const meta *m, uint32_t i, layout *L)
{
    memset(L, 0, sizeof *L);
    L->align = 8;
    if (!is(m, i, "struct")) return false;
    uint32_t open = i + 1;
    if (!is(m, open, "{")) {
        uint32_t s = m->n_structs;
        while (s-- > 0)
            if (m->t[open].n == strlen(m->structs[s].name) && !memcmp(m->t[open].p, m->structs[s].name, m->t[open].n)) break;
        if (s == UINT32_MAX) return false;
        open = m->structs[s].at;
    }
    uint32_t end = skip_group(m, open) - 1, k = open + 1;   /* end: the closing '}' */
    while (k < end)
        if (!parse_field(m, k, end, L, &k)) return false;
    uint64_t v;
    if (is(m, end + 1, "align") && is(m, end + 2, "(") && number(m, end + 3, &v) && v >= 1 && v <= 4096 &&
        v > L->align)
        L->align = (uint32_t)v;
    return true;
}

/* ---- the metadata's statements ---- */

static void top_typealias(meta *m, uint32_t i)
{
    alias a;
    uint32_t k;
    if (m->n_aliases == MAX_ALIASES || !parse_integer(m, i + 1, &a, &k) || !is(m, k, ":=")) return;
    uint32_t e = k + 1;
    while (e < m->n && !is(m, e, ";")) e++;
    if (join_words(m, k + 1, e, a.name)) m->aliases[m->n_aliases++] = a;
}

/* Inside trace { } or stream { }: the `packet . header|context :=` type and
 * the stream's `id = N` and the trace's `byte_order = be`. */
static void block(meta *m, uint32_t open, bool trace)
{
    uint32_t end = skip_group(m, open) - 1;
    stream_decl sd = {0, 0, false, false};
    for (uint32_t k = open + 1; k < end; k = skip_statement(m, k)) {
        uint64_t v;
        if (is(m, k, "packet") && is(m, k + 1, ".") && is(m, k + 3, ":=")) {
            if (trace && is(m, k + 2, "header")) m->header_at = k + 4, m->has_header = true;
            if (!trace && is(m, k + 2, "context")) sd.ctx_at = k + 4, sd.has_ctx = true;
        } else if (!trace && is(m, k, "id") && is(m, k + 1, "=") && number(m, k + 2, &v)) {
            sd.id = (int64_t)v, sd.has_id = true;
        } else if (trace && is(m, k, "byte_order") && is(m, k + 1, "=")) {
            m->big_endian = is(m, k + 2, "be") || is(m, k + 2, "network");
        }
    }
    if (!trace && m->n_streams < MAX_STREAMS) m->streams[m->n_streams++] = sd;
}

static void statements(meta *m)
{
    for (uint32_t i = 0; i < m->n;) {
        if (is(m, i, "typealias")) {
            top_typealias(m, i);
        } else if (is(m, i, "struct") && i + 2 < m->n && is(m, i + 2, "{") && m->n_structs < MAX_STRUCTS &&
                   m->t[i + 1].n < NAME_MAX_LEN) {
            named *s = &m->structs[m->n_structs++];
            memcpy(s->name, m->t[i + 1].p, m->t[i + 1].n);
            s->name[m->t[i + 1].n] = 0;
            s->at = i + 2;
        } else if ((is(m, i, "trace") || is(m, i, "stream")) && is(m, i + 1, "{")) {
            block(m, i + 1, is(m, i, "trace"));
        }
        i = skip_statement(m, i);
    }
}

/* ---- reading packets ---- */

static uint64_t read_field(const unsigned char *b, const field_at *f)
{
    uint64_t v = 0;
    uint32_t n = f->size / 8, at = f->off / 8;
    for (uint32_t k = 0; k < n; k++) v |= (uint64_t)b[at + k] << (8 * (f->be ? n - 1 - k : k));
    return v;
}

static bool readable(const field_at *f, uint32_t limit_bits)
{
    return f->present && f->off % 8 == 0 && f->size % 8 == 0 && f->size <= 64 && f->off + f->size <= limit_bits;
}

static bool all_ones(uint64_t v, uint32_t bits) { return bits == 64 ? v == UINT64_MAX : v == (1ull << bits) - 1; }

typedef struct checker {
    const meta *m;
    layout header, ctx[MAX_STREAMS];
    bool ctx_ok[MAX_STREAMS];
} checker;

/* The stream whose context follows the header b: the one its stream_id
 * names (a stream declared without an id is 0), or the only one when the
 * header has no stream_id. -1 when none is known. */
static int stream_of(const checker *c, const unsigned char *b)
{
    const field_at *sid = &c->header.f[F_STREAM_ID];
    bool by_id = readable(sid, c->header.bits);
    uint64_t id = by_id ? read_field(b, sid) : 0;
    for (uint32_t s = 0; s < c->m->n_streams; s++) {
        const stream_decl *d = &c->m->streams[s];
        if (!c->ctx_ok[s]) continue;
        if (!by_id ? c->m->n_streams == 1 : (d->has_id ? (uint64_t)d->id : 0) == id) return (int)s;
    }
    return -1;
}

static int check_packet(const checker *c, const char *file, uint64_t off, const unsigned char *b, uint32_t have,
                        uint64_t *packet_bytes, ts_error *err)
{
    int s = stream_of(c, b);
    *packet_bytes = 0;
    if (s < 0) return TS_OK;
    const layout *L = &c->ctx[s];
    uint32_t base = align_up(c->header.bits, L->align), limit = have * 8;
    static const int watched[] = {F_TS_BEGIN, F_TS_END, F_SEQ};
    for (size_t w = 0; w < sizeof watched / sizeof watched[0]; w++) {
        field_at f = L->f[watched[w]];
        f.off += base;
        if (readable(&f, limit) && all_ones(read_field(b, &f), f.size))
            return ts__error(err, TS_EPARSE, "%s: byte %llu: packet %s has every bit set (babeltrace's 'unset' value, "
                             "which libbabeltrace2 aborts on): a damaged packet", file,
                             (unsigned long long)(off + f.off / 8), field_names[watched[w]]);
    }
    field_at ps = L->f[F_PACKET_SIZE];
    ps.off += base;
    if (!readable(&ps, limit)) return TS_OK;
    uint64_t bits = read_field(b, &ps);
    if (bits == 0)
        return ts__error(err, TS_EPARSE, "%s: byte %llu: packet_size is 0 (libbabeltrace2 loops on it): a damaged "
                         "packet", file, (unsigned long long)(off + ps.off / 8));
    *packet_bytes = bits % 8 == 0 && bits / 8 >= (base + L->bits + 7) / 8 ? bits / 8 : 0;
    return TS_OK;
}

/* Walk one data stream file packet by packet; stop quietly where the
 * packets stop making sense (babeltrace reports that itself). */
static int check_file(const checker *c, const char *file, ts_error *err)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return TS_OK;   /* babeltrace names what it cannot open */
    }
    unsigned char b[1024];
    int rc = TS_OK;
    for (uint64_t off = 0; rc == TS_OK && off < (uint64_t)st.st_size;) {
        ssize_t got = pread(fd, b, sizeof b, (off_t)off);
        if (got <= 0) break;
        memset(b + got, 0, sizeof b - (size_t)got);
        uint64_t next = 0;
        rc = check_packet(c, file, off, b, (uint32_t)got, &next, err);
        if (next == 0) break;
        off += next;
    }
    close(fd);
    return rc;
}

/* LTTng's packetized metadata: 37-byte headers (magic 0x75D11D57, uuid,
 * checksum, content_size and packet_size in bits, ...) around the text.
 * Unwrapped in place; false when a header does not make sense. */
static bool unpacketize(char *s, size_t *len)
{
    size_t in = 0, out = 0;
    while (in + 37 <= *len) {
        uint32_t magic, content, packet;
        memcpy(&magic, s + in, 4);
        memcpy(&content, s + in + 24, 4);
        memcpy(&packet, s + in + 28, 4);
        if (magic != 0x75D11D57u || content % 8 || packet % 8 || content / 8 < 37 || content > packet ||
            packet / 8 > *len - in)
            return false;
        memmove(s + out, s + in + 37, content / 8 - 37);
        out += content / 8 - 37;
        in += packet / 8;
    }
    *len = out;
    return true;
}

static char *read_metadata(const char *dir, size_t *len, size_t *cap)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/metadata", dir);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    char *s = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n > 0 && n <= (64 << 20) && fseek(f, 0, SEEK_SET) == 0 && (s = ts__malloc((size_t)n + 1))) {
            *cap = (size_t)n + 1;
            *len = fread(s, 1, (size_t)n, f);
            s[*len] = 0;
        }
    }
    fclose(f);
    uint32_t magic = 0;
    if (s && *len >= 4) memcpy(&magic, s, 4);
    if (s && magic == 0x75D11D57u && !unpacketize(s, len)) *len = 0;
    return s;
}

/* Fill c's layouts from the metadata text; false when the packet layout is
 * not one this file reads (the trace is then left unchecked). */
static bool layouts(checker *c, meta *m, const char *text, size_t len)
{
    if (!tokenize(m, text, len)) return false;
    statements(m);
    if (!m->has_header || !parse_struct(m, m->header_at, &c->header)) return false;
    bool any = false;
    for (uint32_t s = 0; s < m->n_streams; s++) {
        c->ctx_ok[s] = m->streams[s].has_ctx && parse_struct(m, m->streams[s].ctx_at, &c->ctx[s]);
        any |= c->ctx_ok[s];
    }
    c->m = m;
    return any;
}

typedef struct parsed { meta *m; checker *c; } parsed;

static void parsed_free(parsed *P)
{
    if (P->m) ts__free(P->m->t, (size_t)P->m->cap * sizeof *P->m->t);
    ts__free(P->m, sizeof *P->m);
    ts__free(P->c, sizeof *P->c);
}

/* TS_OK with P's layouts, TS_ENODATA when they are not ones this file
 * reads, TS_ENOMEM. */
static int parse_metadata(parsed *P, const char *text, size_t len)
{
    P->m = ts__calloc(1, sizeof *P->m);
    P->c = ts__calloc(1, sizeof *P->c);
    if (!P->m || !P->c) return TS_ENOMEM;
    P->m->cap = len < MAX_TOKENS ? (uint32_t)len + 1 : MAX_TOKENS;   /* a token is a byte at least */
    if (!(P->m->t = ts__malloc((size_t)P->m->cap * sizeof *P->m->t))) return TS_ENOMEM;
    return layouts(P->c, P->m, text, len) ? TS_OK : TS_ENODATA;
}

int ts__ctf_check_layout_text(const char *text, size_t len, uint32_t *header_bits)
{
    parsed P = {NULL, NULL};
    char *copy = ts__malloc(len + 1);
    size_t n = len;
    uint32_t magic = 0;
    if (!copy) return TS_ENOMEM;
    memcpy(copy, text, len);
    if (len >= 4) memcpy(&magic, copy, 4);
    int rc = magic == 0x75D11D57u && !unpacketize(copy, &n) ? TS_ENODATA : parse_metadata(&P, copy, n);
    if (rc == TS_OK && header_bits) *header_bits = P.c->header.bits;
    parsed_free(&P);
    ts__free(copy, len + 1);
    return rc;
}

int ts__ctf_check_packets(const char *dir, ts_error *err)
{
    size_t len = 0, cap = 0;
    char *text = read_metadata(dir, &len, &cap);
    parsed P = {NULL, NULL};
    int rc = text ? parse_metadata(&P, text, len) : TS_ENODATA;
    if (rc == TS_ENOMEM) {
        rc = ts__error(err, TS_ENOMEM, "%s: out of memory", dir);
    } else if (rc == TS_OK) {
        DIR *d = opendir(dir);
        char p[4096];
        struct stat st;
        for (struct dirent *e; rc == TS_OK && d && (e = readdir(d));) {
            if (e->d_name[0] == '.' || !strcmp(e->d_name, "metadata")) continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) rc = check_file(P.c, p, err);
        }
        if (d) closedir(d);
    } else {
        rc = TS_OK;   /* a layout this file does not read: babeltrace alone, as before */
    }
    parsed_free(&P);
    ts__free(text, cap);
    return rc;
}
