/* test_pickle.c - the strict pickle reader (src/ingest/pickle.c) and the
 * allocator snapshot analysis built on it (src/memory/snapshot.c).
 *
 * The pickles below were written by Python 3.11's pickle.dumps (the object
 * is in each comment), so the expected values are Python's; the snapshot
 * figures were computed from the real sample with Python's pickle and a
 * plain loop (the e2e test memory_snapshot.sh runs that loop live).
 */
#include <stdlib.h>

#include "test.h"

#include <libdeflate.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "ingest/pickle.h"
#include "memory/snapshot.h"
#include "trainscope/memory.h"

/* {"a": [1, -2, 3.5, "xé", b"y", None, True, (1, 2)], "big": 2**40, "neg": -2**63, "s": {7}}, protocol 4 */
static const char p4[] =
    "\x80\x04\x95\x57\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x61\x94\x5d\x94\x28\x4b\x01\x4a\xfe\xff\xff\xff"
    "\x47\x40\x0c\x00\x00\x00\x00\x00\x00\x8c\x03\x78\xc3\xa9\x94\x43\x01\x79\x94\x4e\x88\x4b\x01\x4b\x02\x86\x94\x65"
    "\x8c\x03\x62\x69\x67\x94\x8a\x06\x00\x00\x00\x00\x00\x01\x8c\x03\x6e\x65\x67\x94\x8a\x08\x00\x00\x00\x00\x00\x00"
    "\x00\x80\x8c\x01\x73\x94\x8f\x94\x28\x4b\x07\x90\x75\x2e";

TEST(pickle_reads_plain_values_of_protocol_4)
{
    ts_pickle p;
    ts_error err = {0};
    if (ts__pickle_load(&p, "p4", (const unsigned char *)p4, sizeof p4 - 1, &err)) TS_FAIL_("%s", err.msg);
    ts_pv a = ts__pv_get(p.root, "a");
    CHECK_EQ_INT(ts__pv_len(a), 8);
    CHECK_EQ_INT(ts__pv_int(ts__pv_at(a, 0), 0), 1);
    CHECK_EQ_INT(ts__pv_int(ts__pv_at(a, 1), 0), -2);
    CHECK_EQ_INT(ts__pv_kind(ts__pv_at(a, 2)), TS_PV_FLOAT);
    CHECK_NEAR(ts__pv_float(ts__pv_at(a, 2), 0), 3.5, 0);
    CHECK_EQ_STR(ts__pv_str(ts__pv_at(a, 3)), "x\xc3\xa9");
    CHECK_EQ_INT(ts__pv_kind(ts__pv_at(a, 4)), TS_PV_BYTES);
    CHECK_EQ_INT(ts__pv_kind(ts__pv_at(a, 5)), TS_PV_NONE);
    CHECK_EQ_INT(ts__pv_kind(ts__pv_at(a, 6)), TS_PV_BOOL);
    CHECK_EQ_INT(ts__pv_int(ts__pv_at(a, 6), 0), 1);
    CHECK_EQ_INT(ts__pv_len(ts__pv_at(a, 7)), 2);
    CHECK_EQ_INT(ts__pv_int(ts__pv_get(p.root, "big"), 0), 1099511627776LL);
    CHECK_EQ_INT(ts__pv_int(ts__pv_get(p.root, "neg"), 0), INT64_MIN);
    ts_pv set = ts__pv_get(p.root, "s");
    CHECK_EQ_INT(ts__pv_len(set), 1);
    CHECK_EQ_INT(ts__pv_int(ts__pv_at(set, 0), 0), 7);
    ts__pickle_free(&p);
}

/* shared = [1]; {"x": shared, "y": shared}: the memo gives the same list twice. */
TEST(pickle_memo_shares_one_value)
{
    static const char b[] = "\x80\x04\x95\x14\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x78\x94\x5d\x94\x4b\x01"
                            "\x61\x8c\x01\x79\x94\x68\x02\x75\x2e";
    ts_pickle p;
    ts_error err = {0};
    if (ts__pickle_load(&p, "memo", (const unsigned char *)b, sizeof b - 1, &err)) TS_FAIL_("%s", err.msg);
    CHECK(ts__pv_get(p.root, "x") == ts__pv_get(p.root, "y"));
    CHECK_EQ_INT(ts__pv_len(ts__pv_get(p.root, "x")), 1);
    ts__pickle_free(&p);
}

/* 27 Nov 2026: a key set twice in one dict read as its first value; Python
 * keeps the last. No pickler writes such a dict, so these are hand-made
 * opcodes; the expected values are what /usr/bin/python3's pickle.loads
 * gives for the same bytes. dup1: {} MARK 'addr' 1 'size' 5 <'addr' fetched
 * from the memo> 2 SETITEMS, then a fresh 'addr' 3 SETITEM -> {'addr': 3,
 * 'size': 5}. dup2: a list of three records whose keys are 'action' 'addr'
 * 'addr' (memo fetches after the first, so records 2 and 3 go by the record
 * path under the first one's keys), addr 10 then 11, 20 then 30, 21 then 31
 * -> [{'action': 'alloc', 'addr': 11}, {.., 'addr': 30}, {.., 'addr': 31}]. */
TEST(pickle_dict_key_set_twice_keeps_the_last_value_as_python)
{
    static const char dup1[] = "\x80\x04\x7d\x94\x28\x8c\x04\x61\x64\x64\x72\x94\x4b\x01\x8c\x04\x73\x69\x7a\x65\x94"
                               "\x4b\x05\x68\x01\x4b\x02\x75\x8c\x04\x61\x64\x64\x72\x4b\x03\x73\x2e";
    static const char dup2[] =
        "\x80\x04\x5d\x94\x28\x7d\x94\x28\x8c\x06\x61\x63\x74\x69\x6f\x6e\x94\x8c\x05\x61\x6c\x6c\x6f\x63\x94\x8c\x04"
        "\x61\x64\x64\x72\x94\x4a\x0a\x00\x00\x00\x68\x04\x4a\x0b\x00\x00\x00\x75\x7d\x94\x28\x68\x02\x68\x03\x68\x04"
        "\x4a\x14\x00\x00\x00\x68\x04\x4a\x1e\x00\x00\x00\x75\x7d\x94\x28\x68\x02\x68\x03\x68\x04\x4a\x15\x00\x00\x00"
        "\x68\x04\x4a\x1f\x00\x00\x00\x75\x65\x2e";
    ts_pickle p;
    ts_error err = {0};
    if (ts__pickle_load(&p, "dup1", (const unsigned char *)dup1, sizeof dup1 - 1, &err)) TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(ts__pv_int(ts__pv_get(p.root, "addr"), 0), 3);
    CHECK_EQ_INT(ts__pv_int(ts__pv_get(p.root, "size"), 0), 5);
    ts__pickle_free(&p);
    if (ts__pickle_load(&p, "dup2", (const unsigned char *)dup2, sizeof dup2 - 1, &err)) TS_FAIL_("%s", err.msg);
    static const int64_t want[3] = {11, 30, 31};
    ts_pv_key addr = TS_PV_KEY("addr");   /* the cached slot, as snapshot.c looks fields up */
    CHECK_EQ_INT(ts__pv_len(p.root), 3);
    for (uint32_t i = 0; i < 3; i++) {
        ts_pv r = ts__pv_at(p.root, i);
        CHECK_EQ_STR(ts__pv_str(ts__pv_get(r, "action")), "alloc");
        CHECK_EQ_INT(ts__pv_int(ts__pv_get(r, "addr"), 0), want[i]);
        CHECK_EQ_INT(ts__pv_int(ts__pv_get_key(r, &addr), 0), want[i]);
    }
    ts__pickle_free(&p);
}

static void expect_refusal(const char *bytes, size_t n, const char *want)
{
    ts_pickle p;
    ts_error err = {0};
    CHECK(ts__pickle_load(&p, "evil.pickle", (const unsigned char *)bytes, n, &err) != TS_OK);
    if (!strstr(err.msg, want)) TS_FAIL_("got '%s', want '%s'", err.msg, want);
    CHECK(strstr(err.msg, "evil.pickle: byte ") == err.msg);
}

/* fr = {"name": "f", "filename": "a.py", "line": 3}; a list of 6 records
 * (i = 0..5): {"action": "alloc", "addr": 2**40 + i, "size": -5 + i,
 * "ok": i % 2 == 0, "none": None, "s1": s, "s2": s (s = "x" + str(i), one
 * object), "frames": [fr, fr] if i % 2 else ([fr] if i == 2 else []),
 * "f": 1.5 if i == 5 else 7}, protocol 4. Records 2-4 take pickle.c's record
 * path (keys seen before; a string memoized and fetched inside the record; a
 * list by APPEND, by APPENDS, empty), 1 and 5 give it up (a new dict in the
 * frames; a float), 0 is the first of its keys. */
static const char records[] =
    "\x80\x04\x95\x9e\x01\x00\x00\x00\x00\x00\x00\x5d\x94\x28\x7d\x94\x28\x8c\x06\x61\x63\x74\x69\x6f\x6e\x94\x8c\x05"
    "\x61\x6c\x6c\x6f\x63\x94\x8c\x04\x61\x64\x64\x72\x94\x8a\x06\x00\x00\x00\x00\x00\x01\x8c\x04\x73\x69\x7a\x65\x94"
    "\x4a\xfb\xff\xff\xff\x8c\x02\x6f\x6b\x94\x88\x8c\x04\x6e\x6f\x6e\x65\x94\x4e\x8c\x02\x73\x31\x94\x8c\x02\x78\x30"
    "\x94\x8c\x02\x73\x32\x94\x68\x09\x8c\x06\x66\x72\x61\x6d\x65\x73\x94\x5d\x94\x8c\x01\x66\x94\x4b\x07\x75\x7d\x94"
    "\x28\x68\x02\x68\x03\x68\x04\x8a\x06\x01\x00\x00\x00\x00\x01\x68\x05\x4a\xfc\xff\xff\xff\x68\x06\x89\x68\x07\x4e"
    "\x68\x08\x8c\x02\x78\x31\x94\x68\x0a\x68\x0f\x68\x0b\x5d\x94\x28\x7d\x94\x28\x8c\x04\x6e\x61\x6d\x65\x94\x68\x0d"
    "\x8c\x08\x66\x69\x6c\x65\x6e\x61\x6d\x65\x94\x8c\x04\x61\x2e\x70\x79\x94\x8c\x04\x6c\x69\x6e\x65\x94\x4b\x03\x75"
    "\x68\x11\x65\x68\x0d\x4b\x07\x75\x7d\x94\x28\x68\x02\x68\x03\x68\x04\x8a\x06\x02\x00\x00\x00\x00\x01\x68\x05\x4a"
    "\xfd\xff\xff\xff\x68\x06\x88\x68\x07\x4e\x68\x08\x8c\x02\x78\x32\x94\x68\x0a\x68\x17\x68\x0b\x5d\x94\x68\x11\x61"
    "\x68\x0d\x4b\x07\x75\x7d\x94\x28\x68\x02\x68\x03\x68\x04\x8a\x06\x03\x00\x00\x00\x00\x01\x68\x05\x4a\xfe\xff\xff"
    "\xff\x68\x06\x89\x68\x07\x4e\x68\x08\x8c\x02\x78\x33\x94\x68\x0a\x68\x1a\x68\x0b\x5d\x94\x28\x68\x11\x68\x11\x65"
    "\x68\x0d\x4b\x07\x75\x7d\x94\x28\x68\x02\x68\x03\x68\x04\x8a\x06\x04\x00\x00\x00\x00\x01\x68\x05\x4a\xff\xff\xff"
    "\xff\x68\x06\x88\x68\x07\x4e\x68\x08\x8c\x02\x78\x34\x94\x68\x0a\x68\x1d\x68\x0b\x5d\x94\x68\x0d\x4b\x07\x75\x7d"
    "\x94\x28\x68\x02\x68\x03\x68\x04\x8a\x06\x05\x00\x00\x00\x00\x01\x68\x05\x4b\x00\x68\x06\x89\x68\x07\x4e\x68\x08"
    "\x8c\x02\x78\x35\x94\x68\x0a\x68\x20\x68\x0b\x5d\x94\x28\x68\x11\x68\x11\x65\x68\x0d\x47\x3f\xf8\x00\x00\x00\x00"
    "\x00\x00\x75\x65\x2e";

TEST(pickle_records_of_keys_seen_before_read_as_python_wrote_them)
{
    ts_pickle p;
    ts_error err = {0};
    if (ts__pickle_load(&p, "records", (const unsigned char *)records, sizeof records - 1, &err))
        TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(ts__pv_len(p.root), 6);
    ts_pv fr = ts__pv_at(ts__pv_get(ts__pv_at(p.root, 1), "frames"), 0);
    CHECK_EQ_STR(ts__pv_str(ts__pv_get(fr, "filename")), "a.py");
    CHECK_EQ_INT(ts__pv_int(ts__pv_get(fr, "line"), 0), 3);
    for (uint32_t i = 0; i < 6; i++) {
        ts_pv r = ts__pv_at(p.root, i);
        char s[3] = {'x', (char)('0' + i), 0};
        CHECK_EQ_STR(ts__pv_str(ts__pv_get(r, "action")), "alloc");
        CHECK_EQ_INT(ts__pv_int(ts__pv_get(r, "addr"), 0), (1LL << 40) + i);
        CHECK_EQ_INT(ts__pv_int(ts__pv_get(r, "size"), 0), -5 + (int64_t)i);
        CHECK_EQ_INT(ts__pv_kind(ts__pv_get(r, "ok")), TS_PV_BOOL);
        CHECK_EQ_INT(ts__pv_int(ts__pv_get(r, "ok"), -1), i % 2 == 0);
        CHECK_EQ_INT(ts__pv_kind(ts__pv_get(r, "none")), TS_PV_NONE);
        CHECK_EQ_STR(ts__pv_str(ts__pv_get(r, "s1")), s);
        CHECK(ts__pv_get(r, "s1") == ts__pv_get(r, "s2"));   /* one object in Python: one value here */
        ts_pv frames = ts__pv_get(r, "frames");
        CHECK_EQ_INT(ts__pv_kind(frames), TS_PV_LIST);
        CHECK_EQ_INT(ts__pv_len(frames), i % 2 ? 2 : i == 2 ? 1 : 0);
        for (uint32_t k = 0; k < ts__pv_len(frames); k++) CHECK(ts__pv_at(frames, k) == fr);
        if (i == 5) CHECK_NEAR(ts__pv_float(ts__pv_get(r, "f"), 0), 1.5, 0);
        else CHECK_EQ_INT(ts__pv_int(ts__pv_get(r, "f"), 0), 7);
    }
    ts__pickle_free(&p);
}

TEST(pickle_refuses_globals_and_object_building)
{
    /* collections.OrderedDict(), protocol 4: STACK_GLOBAL then REDUCE */
    static const char od[] = "\x80\x04\x95\x22\x00\x00\x00\x00\x00\x00\x00\x8c\x0b\x63\x6f\x6c\x6c\x65\x63\x74\x69\x6f"
                             "\x6e\x73\x94\x8c\x0b\x4f\x72\x64\x65\x72\x65\x64\x44\x69\x63\x74\x94\x93\x94\x29\x52\x94\x2e";
    expect_refusal(od, sizeof od - 1, "byte 39: pickle global 'collections.OrderedDict' is not one this reader knows");
    /* the classic: os.system("echo pwned") in protocol 0's GLOBAL */
    static const char sys0[] = "cos\nsystem\n(S'echo pwned'\ntR.";
    expect_refusal(sys0, sizeof sys0 - 1, "byte 0: pickle global 'os.system' is not one this reader knows");
    /* REDUCE on plain values is refused too, whatever is below it */
    static const char reduce[] = "\x80\x04K\x01)R.";
    expect_refusal(reduce, sizeof reduce - 1, "byte 5: pickle opcode that builds an object");
    /* protocol 2 writes bytes through _codecs.encode: refused, named */
    static const char p2bytes[] = "\x80\x02" "c_codecs\nencode\nq\x00.";
    expect_refusal(p2bytes, sizeof p2bytes - 1, "'_codecs.encode'");
}

TEST(pickle_refuses_damage)
{
    expect_refusal(p4, 40, "pickle cut short");
    expect_refusal(p4, sizeof p4 - 2, "pickle ends without STOP");
    static const char bad_op[] = "\x80\x04\xff.";
    expect_refusal(bad_op, sizeof bad_op - 1, "byte 2: pickle opcode 0xff is not one this reader knows");
    static const char get_unset[] = "\x80\x04h\x05.";
    expect_refusal(get_unset, sizeof get_unset - 1, "memo fetch of an index never stored");
    static const char two[] = "\x80\x04K\x01K\x02.";
    expect_refusal(two, sizeof two - 1, "STOP with other than one value");
    static const char append_int[] = "\x80\x04K\x01K\x02" "a.";
    expect_refusal(append_int, sizeof append_int - 1, "APPEND(S)/ADDITEMS on something not a list");
    static const char wide[] = "\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.";
    expect_refusal(wide, sizeof wide - 1, "integer wider than 64 bits");
    /* a list, MARK, POP (of the list, below the mark), APPENDS: Python says
     * "could not find MARK"; taking the mark would reach past the stack's
     * top (fuzz_pickle found it: a 2^32-slot container) */
    static const char popped[] = "\x80\x04](0e.";
    expect_refusal(popped, sizeof popped - 1, "byte 5: pickle MARK above the stack's top");
}

/* [0, 1, ..., 255, 0, 1, ...] (100,000 BININT1), a 5,000-byte string, then
 * `tail` at byte 4 + 200,000 + 5 + 5,000 + 1 = 205,010 (Python's pickle
 * reads the same bytes as that list and string), written
 * by the test itself; read through small windows, every opcode and the
 * string straddle refills. */
static unsigned char *long_pickle(const char *tail, size_t *n)
{
    size_t cap = 2 + 1 + 1 + 200000 + 5 + 5000 + 1 + 8;
    unsigned char *b = malloc(cap), *q = b;
    *q++ = 0x80; *q++ = 4; *q++ = ']'; *q++ = '(';
    for (int i = 0; i < 100000; i++) { *q++ = 'K'; *q++ = (unsigned char)(i % 256); }
    *q++ = 'X'; *q++ = 0x88; *q++ = 0x13; *q++ = 0; *q++ = 0;   /* BINUNICODE of 5,000 bytes */
    for (int i = 0; i < 5000; i++) *q++ = (unsigned char)('a' + i % 26);
    *q++ = 'e';
    size_t t = strlen(tail);
    memcpy(q, tail, t);
    *n = (size_t)(q - b) + t;
    return b;
}

TEST(pickle_read_through_a_window_matches_the_whole)
{
    size_t n;
    unsigned char *b = long_pickle(".", &n);
    size_t windows[] = {16, 37, 1000, 1 << 20};
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
        ts_src src;
        ts_pickle p;
        ts_error err = {0};
        if (ts__src_open_mem(&src, "long.pickle", b, n, &err)) TS_FAIL_("%s", err.msg);
        if (ts__pickle_load_src(&p, &src, windows[w], (uint64_t)1 << 30, NULL, NULL, &err)) TS_FAIL_("%s", err.msg);
        ts__src_close(&src);
        CHECK_EQ_INT(ts__pv_len(p.root), 100001);
        CHECK_EQ_INT(ts__pv_int(ts__pv_at(p.root, 99999), -1), 99999 % 256);
        const char *str = ts__pv_str(ts__pv_at(p.root, 100000));
        CHECK(str && strlen(str) == 5000 && str[0] == 'a' && str[4999] == 'a' + 4999 % 26);
        ts__pickle_free(&p);
    }
    free(b);
    /* the offset of a bad opcode is the pickle's, not the window's */
    b = long_pickle("\xff.", &n);
    ts_src src;
    ts_pickle p;
    ts_error err = {0};
    if (ts__src_open_mem(&src, "bad.pickle", b, n, &err)) TS_FAIL_("%s", err.msg);
    CHECK(ts__pickle_load_src(&p, &src, 37, (uint64_t)1 << 30, NULL, NULL, &err) != TS_OK);
    ts__src_close(&src);
    CHECK_EQ_STR(err.msg, "bad.pickle: byte 205010: pickle opcode 0xff is not one this reader knows");
    /* cut short inside the string, whose opcode is at 4 + 200,000 */
    err = (ts_error){0};
    if (ts__src_open_mem(&src, "cut.pickle", b, 200010, &err)) TS_FAIL_("%s", err.msg);
    CHECK(ts__pickle_load_src(&p, &src, 37, (uint64_t)1 << 30, NULL, NULL, &err) != TS_OK);
    ts__src_close(&src);
    CHECK_EQ_STR(err.msg, "cut.pickle: byte 200004: pickle cut short");
    free(b);
}

/* A list of 60,000 items in APPENDS of 1,000 (its array outgrown again and
 * again: the old arrays take the later allocations), even items the
 * strings "0", "2", ... (each a new allocation), odd items j % 256. */
static unsigned char *growing_pickle(size_t *n)
{
    unsigned char *b = malloc(60 * (2 + 1000 * 8) + 8), *q = b;
    *q++ = 0x80; *q++ = 4; *q++ = ']';
    for (int j = 0; j < 60000; j++) {
        if (j % 1000 == 0) *q++ = '(';
        if (j % 2) { *q++ = 'K'; *q++ = (unsigned char)(j % 256); }
        else { *q++ = 0x8c; *q = (unsigned char)sprintf((char *)q + 1, "%d", j); q += 1 + *q; }
        if (j % 1000 == 999) *q++ = 'e';
    }
    *q++ = '.';
    *n = (size_t)(q - b);
    return b;
}

static void check_growing(const ts_pickle *p)
{
    CHECK_EQ_INT(ts__pv_len(p->root), 60000);
    int bad = 0;
    for (int j = 0; j < 60000; j++) {
        char want[16];
        snprintf(want, sizeof want, "%d", j);
        ts_pv v = ts__pv_at(p->root, (uint32_t)j);
        const char *s = ts__pv_str(v);
        if (j % 2 ? ts__pv_int(v, -1) != j % 256 : !s || strcmp(s, want)) bad++;
    }
    CHECK_EQ_INT(bad, 0);
}

/* A gzip file is decoded from its mapping (ts__src_open_inplace): the same
 * tree as the bytes in memory read through a small window, and a file cut
 * short names the compressed byte where it ends. */
TEST(pickle_gzip_file_read_in_place_matches_the_window)
{
    size_t n;
    unsigned char *b = growing_pickle(&n);
    ts_src src;
    ts_pickle p;
    ts_error err = {0};
    if (ts__src_open_mem(&src, "g.pickle", b, n, &err)) TS_FAIL_("%s", err.msg);
    if (ts__pickle_load_src(&p, &src, 37, (uint64_t)1 << 30, NULL, NULL, &err)) TS_FAIL_("%s", err.msg);
    ts__src_close(&src);
    check_growing(&p);
    ts__pickle_free(&p);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    size_t zcap = libdeflate_gzip_compress_bound(c, n);
    unsigned char *z = malloc(zcap);
    size_t zn = libdeflate_gzip_compress(c, b, n, z, zcap);
    libdeflate_free_compressor(c);
    CHECK(zn > 1000);
    char path[] = "/tmp/ts_test_pickle_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, z, zn) == (ssize_t)zn);
    if (ts__pickle_load_file(&p, path, (uint64_t)1 << 30, NULL, NULL, &err)) TS_FAIL_("%s", err.msg);
    check_growing(&p);
    ts__pickle_free(&p);
    CHECK(ftruncate(fd, (off_t)(zn / 2)) == 0);
    CHECK(ts__pickle_load_file(&p, path, (uint64_t)1 << 30, NULL, NULL, &err) != TS_OK);
    char want[128];
    snprintf(want, sizeof want, "%s: byte %zu: gzip stream cut short", path, zn / 2);
    CHECK_EQ_STR(err.msg, want);
    close(fd);
    unlink(path);
    free(z);
    free(b);
}

/* fuzz_pickle, 27 Nov 2026: an opcode read right after the window was
 * refilled was reported at its offset in the old window (byte 4 for 2). */
TEST(pickle_error_offsets_do_not_depend_on_the_window)
{
    static const char b[] = "\x80\x00\x00\x00\x00\x00\x04\x95\x1f\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94.";
    for (size_t w = 16; w < 80; w++) {
        ts_src src;
        ts_pickle p;
        ts_error err = {0};
        if (ts__src_open_mem(&src, "w.pickle", b, sizeof b - 1, &err)) TS_FAIL_("%s", err.msg);
        CHECK(ts__pickle_load_src(&p, &src, w, (uint64_t)1 << 30, NULL, NULL, &err) != TS_OK);
        ts__src_close(&src);
        CHECK_EQ_STR(err.msg, "w.pickle: byte 2: pickle opcode 0x00 is not one this reader knows");
    }
}

TEST(snapshot_of_a_transformer_step_matches_python)
{
    const char *path = ts_test_data("memory-snapshots/transformer-lm-step.pickle.gz");
    if (access(path, R_OK)) SKIP("%s missing", path);
    ts_mem_snapshot *s;
    ts_error err = {0};
    if (ts_mem_snapshot_load(path, &s, &err)) TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(s->n_devices, 1);
    const ts_mem_snap_device *d = &s->devices[0];
    CHECK_EQ_INT(d->n_segments, 216);
    CHECK_EQ_INT(d->n_blocks, 455);
    CHECK_EQ_INT(d->reserved_bytes, 14180941824LL);
    CHECK_EQ_INT(d->allocated_bytes, 1377753600LL);
    CHECK_EQ_INT(d->fragmentation_bytes, 12803188224LL);
    CHECK_EQ_INT(d->largest_free_bytes, 329252864LL);
    CHECK_EQ_INT(d->n_trace, 5163);
    CHECK_EQ_INT(d->n_alloc, 1721);
    CHECK_EQ_INT(d->n_free, 1721);
    CHECK_EQ_INT(d->start_bytes, 1377753092LL);
    CHECK_EQ_INT(d->peak_bytes, 13927831556LL);
    CHECK_EQ_INT(d->peak_us, 1776479641223438LL);
    CHECK_EQ_INT(d->end_bytes, 1377753092LL);
    CHECK_EQ_INT(d->first_us, 1776479641085368LL);
    CHECK_EQ_INT(d->last_us, 1776479641333549LL);
    /* alive at the peak: bytes add up to the peak; the largest are the
     * 327,680,000-byte einsum and log_softmax outputs */
    int64_t sum = 0;
    for (uint32_t i = d->first_alive; i < d->first_alive + d->n_alive; i++) sum += s->alive[i].bytes;
    CHECK_EQ_INT(sum, d->peak_bytes);
    CHECK_EQ_INT(s->alive[d->first_alive].bytes, 327680000);
    bool einsum = false;
    for (uint32_t i = d->first_alive; i < d->first_alive + 3; i++) {
        const ts_mem_snap_block *b = &s->alive[i];
        CHECK_EQ_INT(b->bytes, 327680000);
        if (strstr(b->frame, "einsum ") == b->frame) einsum = strstr(b->user_frame, "cs336_basics") != NULL;
    }
    CHECK(einsum);
    /* Grouped by allocating frame (what `memory --trace` lists): the groups
     * hold every block alive at the peak once, so they add up to Python's
     * peak; largest first, each frame once. */
    ts_mem_frame_group *g = calloc(d->n_alive + 1, sizeof *g);
    uint32_t ng = ts_mem_snapshot_frames(s, d, g);
    int64_t gsum = 0;
    uint64_t blocks = 0;
    for (uint32_t k = 0; k < ng; k++) {
        gsum += g[k].bytes;
        blocks += g[k].blocks;
        if (k) CHECK(g[k].bytes <= g[k - 1].bytes);
        for (uint32_t j = 0; j < k; j++) CHECK(strcmp(g[j].frame, g[k].frame) != 0);
    }
    CHECK(ng > 0 && ng <= d->n_alive);
    CHECK_EQ_INT(gsum, d->peak_bytes);
    CHECK_EQ_INT(blocks, d->n_alive);
    free(g);
    ts_mem_snapshot_destroy(s);
}

/* A pickle that is not a snapshot, and one without the dict's lists. */
TEST(snapshot_refuses_pickles_that_are_not_snapshots)
{
    ts_mem_snapshot *s;
    ts_error err = {0};
    CHECK(ts__mem_snapshot_from_buffer("p4.pickle", p4, sizeof p4 - 1, &s, &err) != TS_OK);
    CHECK_EQ_STR(err.msg, "p4.pickle: byte 0: a pickle, but not a PyTorch allocator snapshot "
                          "(no \"segments\" or \"device_traces\" list)");
    err = (ts_error){0};
    CHECK(ts__mem_snapshot_from_buffer("text.pickle", "{}", 2, &s, &err) != TS_OK);
    CHECK(strstr(err.msg, "text.pickle: byte 0: not a pickle of protocol 2 or later") == err.msg);
}

/* fuzz_pickle, 26 Nov 2026: a snapshot with nothing alive at its peak sorted
 * an empty, never allocated array (qsort of NULL + 0: undefined behaviour). */
TEST(snapshot_with_nothing_alive_at_the_peak)
{
    /* {"segments": [], "device_traces": [[]]}, protocol 4 */
    static const char b[] = "\x80\x04\x95\x27\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x08segments\x94\x5d\x94"
                            "\x8c\x0d" "device_traces\x94\x5d\x94\x5d\x94\x61\x75\x2e";
    ts_mem_snapshot *s;
    ts_error err = {0};
    if (ts__mem_snapshot_from_buffer("empty.pickle", b, sizeof b - 1, &s, &err)) TS_FAIL_("%s", err.msg);
    CHECK_EQ_INT(s->n_devices, 1);
    CHECK_EQ_INT(s->devices[0].n_alive, 0);
    CHECK_EQ_INT(s->devices[0].peak_bytes, 0);
    ts_mem_snapshot_destroy(s);
}
