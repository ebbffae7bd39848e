/*
 * _render.c - compiled writers for decoded values: the engine's text notation (var2str /
 * var_to_str, text/writer.py) and the lossless JSON form (jsonform.py).  Part of the _speedups
 * extension; fast.py builds the writers from the pure writers' own tables.
 *
 * Same contract as the codec: TextWriter.render(value) / JsonWriter.render(value) return exactly
 * the str that writer.to_text / jsonform.dumps return, or None ("bail out") and the caller does the
 * whole job in Python.  Everything rare bails: classes without an entry (NodePath, full Objects,
 * typed containers, FrozenDict, subclasses, ...), Dictionary keys other than null/bool/int/float/
 * String/StringName, ints beyond 64 bits in the text form, text nesting deeper than RENDER_MAX_DEPTH,
 * a JSON form that might nest deeper than the JsonWriter's max_depth (jsonform writes it flat), and
 * any internal error (the exception is cleared).  Lone surrogates are written as \udXXX by both.
 *
 * For `read`, whole lines in one call each (the reader's hot path; Python stays their reference):
 * JsonWriter.record(rec, type, text or TextWriter, optional) = records.Record.to_jsonl() of a record
 * without error or packet fields (its attributes read from their slots), JsonWriter.line(head, text,
 * value) for the rest; TextWriter.summary_line(rec, ...) = read_cmds.text_line(rec) of a Variant
 * record, writing only the start of the value's text it shows (as TextWriter.render_start does).
 *
 * Nothing Godot-specific is written here: type names, the punctuation of each engine family
 * (Style), escape tables, which classes print as a constant, float widths and type ranks for key
 * order all arrive from Python.  What is here is the algorithms: the engines' float formatting
 * (Godot 3 "%g" as Python's format() prints it, Godot 4 Grisu2 ported from writer.py with its
 * cached powers handed over), Python's float repr (Ryu's shortest digits, tables from fast.py;
 * "%g" is derived from them too, see put_g6), the dictionary key order (see sort_pairs) and
 * JSON's string escaping (as the json module does it).
 *
 * Safety: no Python code runs while a value is walked (only exact builtin types are compared), so
 * containers cannot change under the walker; recursion is bounded by RENDER_MAX_DEPTH.
 */
#include "_speedups.h"
#include <structmember.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define RENDER_MAX_DEPTH 256 /* deeper values bail: the pure writers have room for 1024 levels */
#define JSON_LEAF_LEVELS 3   /* most JSON levels of a form with no container inside: a packed vector array */
#define BUF_LOCAL 4096       /* output bytes kept on the C stack before the buffer moves to the heap */
#define TYPE_CACHE 64        /* class -> entry cache slots (a power of two) */
#define PAIRS_LOCAL 16       /* dictionary entries sorted without a heap allocation */
#define ESC_MAX 7            /* longest escape sequence of one ASCII character */
#define ESC_CHUNK 4096       /* bytes escaped per buffer reservation */

/* ---------------------------------------------------------------------------------------------
 * Output buffer: UTF-8 bytes, made into a str once at the end.
 * ------------------------------------------------------------------------------------------- */
typedef struct {
    char *p;
    Py_ssize_t len, cap;
    int ascii; /* every byte so far is < 0x80: the str is built with one memcpy */
    Py_ssize_t capped; /* > 0: the text's start only: writing stops at the first piece that does not
                        * fit once this many bytes are written ... */
    int cut;           /* ... which it did */
    char local[BUF_LOCAL];
} Buf;

static void buf_init(Buf *b)
{
    b->p = b->local;
    b->len = 0;
    b->cap = BUF_LOCAL;
    b->ascii = 1;
    b->capped = b->cut = 0;
}

static void buf_free(Buf *b)
{
    if (b->p != b->local)
        PyMem_Free(b->p);
}

static int buf_grow(Buf *b, Py_ssize_t extra)
{
    Py_ssize_t want, cap;
    char *np;
    if (b->capped) {
        if (b->len >= b->capped) {
            b->cut = 1;
            return -1;
        }
        if (b->p == b->local && b->len + extra <= BUF_LOCAL) { /* room for this piece only: checked again after */
            b->cap = b->len + extra;
            return 0;
        }
    }
    if (extra > PY_SSIZE_T_MAX / 4 - b->len)
        return -1;
    want = b->len + extra;
    cap = b->cap * 2;
    if (cap < want)
        cap = want;
    if (b->p == b->local) {
        np = PyMem_Malloc((size_t)cap);
        if (np != NULL)
            memcpy(np, b->p, (size_t)b->len);
    } else {
        np = PyMem_Realloc(b->p, (size_t)cap);
    }
    if (np == NULL)
        return -1;
    b->p = np;
    b->cap = cap;
    return 0;
}

#define RESERVE(b, n) ((b)->cap - (b)->len >= (Py_ssize_t)(n) ? 0 : buf_grow((b), (Py_ssize_t)(n)))

/* d[0:n] = s[0:n] for n <= 16 with a few fixed-size moves (a key, a separator, a remembered float's
 * text: most pieces are that short, and a call of memcpy costs more than they do) */
static inline void copy_small(char *d, const char *s, Py_ssize_t n)
{
    if (n >= 8) {
        uint64_t a, z;
        memcpy(&a, s, 8);
        memcpy(&z, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &z, 8);
    } else if (n >= 4) {
        uint32_t a, z;
        memcpy(&a, s, 4);
        memcpy(&z, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &z, 4);
    } else if (n > 0) {
        char a = s[0], m = s[n / 2], z = s[n - 1];
        d[0] = a;
        d[n / 2] = m;
        d[n - 1] = z;
    }
}

static inline int put(Buf *b, const char *s, Py_ssize_t n)
{
    if (RESERVE(b, n) < 0)
        return -1;
    if (n <= 16)
        copy_small(b->p + b->len, s, n);
    else
        memcpy(b->p + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

static inline int put_ch(Buf *b, char c)
{
    if (RESERVE(b, 1) < 0)
        return -1;
    b->p[b->len++] = c;
    return 0;
}

#define PUT_LIT(b, s) put((b), (s), (Py_ssize_t)sizeof(s) - 1)

static PyObject *buf_str(Buf *b)
{
    PyObject *s;
    if (!b->ascii)
        return PyUnicode_DecodeUTF8(b->p, b->len, NULL);
    if ((s = PyUnicode_New(b->len, 127)) != NULL)
        memcpy(PyUnicode_DATA(s), b->p, (size_t)b->len);
    return s;
}

/* A piece of fixed text from Python (style punctuation, names, constants): ASCII, owned. */
typedef struct {
    char *s;
    Py_ssize_t n;
} Str;

static int str_set(Str *dst, PyObject *o)
{
    const char *p;
    Py_ssize_t n;
    if (!PyUnicode_Check(o) || (p = PyUnicode_AsUTF8AndSize(o, &n)) == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "expected a str");
        return -1;
    }
    if (!PyUnicode_IS_ASCII(o)) {
        PyErr_SetString(PyExc_ValueError, "writer text must be ASCII");
        return -1;
    }
    if ((dst->s = PyMem_Malloc((size_t)n + 1)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(dst->s, p, (size_t)n + 1);
    dst->n = n;
    return 0;
}

static void str_free(Str *s)
{
    PyMem_Free(s->s);
    s->s = NULL;
}

#define PUT_STR(b, x) put((b), (x).s, (x).n)

/* The UTF-8 of a str: its own bytes when ASCII, else CPython's cached UTF-8 (lone surrogates
 * fail: see utf8_any). */
static inline const char *utf8_of(PyObject *s, Py_ssize_t *n, int *ascii)
{
    *ascii = 0; /* set on every path (the compiler cannot see that a NULL return is never read on) */
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0)
        return NULL;
#endif
    if (PyUnicode_IS_ASCII(s)) {
        *n = PyUnicode_GET_LENGTH(s);
        *ascii = 1;
        return (const char *)PyUnicode_DATA(s);
    }
    return PyUnicode_AsUTF8AndSize(s, n);
}

/* The UTF-8 of any str.  A Godot 3 String may hold lone surrogates, which UTF-8 cannot: they come
 * in their "surrogatepass" form ED A0..BF xx (never part of valid UTF-8), *tmp owning those bytes,
 * and the writers put each one as the escape \udXXX (is_surrogate, put_surrogate). */
static const char *utf8_any(PyObject *s, Py_ssize_t *n, int *ascii, PyObject **tmp)
{
    const char *p = utf8_of(s, n, ascii);
    *tmp = NULL;
    if (p != NULL || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        return p;
    PyErr_Clear();
    if ((*tmp = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass")) == NULL)
        return NULL;
    *n = PyBytes_GET_SIZE(*tmp);
    return PyBytes_AS_STRING(*tmp);
}

#define SURROGATE_ESC 6 /* bytes of \udXXX */

/* p[i] starts a lone surrogate in utf8_any's bytes (which then always hold 2 more bytes) */
static inline int is_surrogate(const unsigned char *p, Py_ssize_t i)
{
    return p[i] == 0xED && p[i + 1] >= 0xA0;
}

static const char HEX[] = "0123456789abcdef";

/* \udXXX for the 3 bytes at p; returns the end of what it wrote */
static char *put_surrogate(char *o, const unsigned char *p)
{
    unsigned cp = ((unsigned)(p[0] & 0x0F) << 12) | ((unsigned)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    o[0] = '\\';
    o[1] = 'u';
    o[2] = HEX[cp >> 12];
    o[3] = HEX[(cp >> 8) & 15];
    o[4] = HEX[(cp >> 4) & 15];
    o[5] = HEX[cp & 15];
    return o + SURROGATE_ESC;
}

/* ---------------------------------------------------------------------------------------------
 * Numbers.
 * ------------------------------------------------------------------------------------------- */
static int put_ll(Buf *b, long long v)
{
    char tmp[24], *end = tmp + sizeof tmp, *q = end;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--q = '-';
    return put(b, q, end - q);
}

/* Any Python int, as str() writes it. */
static int put_pyint(Buf *b, PyObject *v)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    PyObject *s;
    const char *p;
    Py_ssize_t n;
    int rc;
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (!overflow)
        return put_ll(b, x);
    if ((s = PyLong_Type.tp_repr(v)) == NULL)
        return -1;
    p = PyUnicode_AsUTF8AndSize(s, &n);
    rc = p == NULL ? -1 : put(b, p, n);
    Py_DECREF(s);
    return rc;
}

/* An int the engine holds in int64 (anything wider: the pure writer raises, so bail). */
static int put_int64(Buf *b, PyObject *v)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred()))
        return -1;
    return put_ll(b, x);
}

static int put_pyos(Buf *b, double x, char code, int precision, int flags)
{
    char *s = PyOS_double_to_string(x, code, precision, flags, NULL);
    int rc;
    if (s == NULL)
        return -1;
    rc = put(b, s, (Py_ssize_t)strlen(s));
    PyMem_Free(s);
    return rc;
}

/* ---- Ryu: the shortest digits that read back as the same double (and the closest of those,
 * ties to even), which is what Python's repr prints.  The algorithm of Ulf Adams, "Ryu: fast
 * float-to-string conversion" (PLDI 2018; reference code Apache-2.0 / Boost-1.0), its d2d step;
 * the two tables of 125-bit powers of 5 are computed by fast.py and set once with
 * set_float_tables(). ---- */
#define RYU_POW5_BITS 125
#define RYU_POW5_COUNT 326
#define RYU_POW5_INV_COUNT 342
static uint64_t ryu_pow5[RYU_POW5_COUNT][2], ryu_pow5_inv[RYU_POW5_INV_COUNT][2];
static int ryu_ready;

static inline uint32_t pow5bits(int32_t e) { return (uint32_t)(((e * 1217359) >> 19) + 1); }
static inline uint32_t log10_pow2(int32_t e) { return (uint32_t)((e * 78913) >> 18); }
static inline uint32_t log10_pow5(int32_t e) { return (uint32_t)((e * 732923) >> 20); }

static inline int pow5_factor_at_least(uint64_t v, uint32_t p)
{
    uint32_t n = 0;
    while (v % 5 == 0 && n < p) {
        v /= 5;
        n++;
    }
    return n >= p;
}

static inline uint64_t mul_shift64(uint64_t m, const uint64_t *mul, int32_t j)
{
    unsigned __int128 b0 = (unsigned __int128)m * mul[0], b2 = (unsigned __int128)m * mul[1];
    return (uint64_t)(((b0 >> 64) + b2) >> (j - 64));
}

/* x finite and > 0: x ~ *digits * 10^*exp10 with the fewest digits. */
static void ryu(double x, uint64_t *digits, int *exp10)
{
    uint64_t bits, mantissa, m2, mv, vr, vp, vm, output;
    uint32_t exponent, mm_shift;
    int32_t e2, e10, removed = 0;
    int accept, vm_tz = 0, vr_tz = 0;
    uint8_t last = 0;
    memcpy(&bits, &x, 8);
    mantissa = bits & ((1ull << 52) - 1);
    exponent = (uint32_t)((bits >> 52) & 0x7FF);
    if (exponent == 0) {
        e2 = 1 - 1023 - 52 - 2;
        m2 = mantissa;
    } else {
        e2 = (int32_t)exponent - 1023 - 52 - 2;
        m2 = (1ull << 52) | mantissa;
    }
    accept = (m2 & 1) == 0;
    mv = 4 * m2;
    mm_shift = mantissa != 0 || exponent <= 1;
    if (e2 >= 0) {
        uint32_t q = log10_pow2(e2) - (e2 > 3);
        int32_t k = RYU_POW5_BITS + (int32_t)pow5bits((int32_t)q) - 1, i = -e2 + (int32_t)q + k;
        e10 = (int32_t)q;
        vr = mul_shift64(4 * m2, ryu_pow5_inv[q], i);
        vp = mul_shift64(4 * m2 + 2, ryu_pow5_inv[q], i);
        vm = mul_shift64(4 * m2 - 1 - mm_shift, ryu_pow5_inv[q], i);
        if (q <= 21) {
            if (mv % 5 == 0)
                vr_tz = pow5_factor_at_least(mv, q);
            else if (accept)
                vm_tz = pow5_factor_at_least(mv - 1 - mm_shift, q);
            else
                vp -= pow5_factor_at_least(mv + 2, q);
        }
    } else {
        uint32_t q = log10_pow5(-e2) - (-e2 > 1);
        int32_t i = -e2 - (int32_t)q, k = (int32_t)pow5bits(i) - RYU_POW5_BITS, j = (int32_t)q - k;
        e10 = (int32_t)q + e2;
        vr = mul_shift64(4 * m2, ryu_pow5[i], j);
        vp = mul_shift64(4 * m2 + 2, ryu_pow5[i], j);
        vm = mul_shift64(4 * m2 - 1 - mm_shift, ryu_pow5[i], j);
        if (q <= 1) {
            vr_tz = 1;
            if (accept)
                vm_tz = mm_shift == 1;
            else
                --vp;
        } else if (q < 63) {
            vr_tz = (mv & ((1ull << q) - 1)) == 0;
        }
    }
    if (vm_tz || vr_tz) { /* the general case (rare) */
        while (vp / 10 > vm / 10) {
            vm_tz &= vm % 10 == 0;
            vr_tz &= last == 0;
            last = (uint8_t)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        if (vm_tz) {
            while (vm % 10 == 0) {
                vr_tz &= last == 0;
                last = (uint8_t)(vr % 10);
                vr /= 10;
                vp /= 10;
                vm /= 10;
                removed++;
            }
        }
        if (vr_tz && last == 5 && vr % 2 == 0)
            last = 4; /* exactly .5: round to even */
        output = vr + ((vr == vm && (!accept || !vm_tz)) || last >= 5);
    } else {
        int round_up = 0;
        if (vp / 100 > vm / 100) {
            round_up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while (vp / 10 > vm / 10) {
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        output = vr + (vr == vm || round_up);
    }
    *digits = output;
    *exp10 = e10 + removed;
}

/* The decimal digits of v (> 0) into d (room for 20); returns how many. */
static int u64_digits(uint64_t v, char *d)
{
    char tmp[20];
    int n = 0, i;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++)
        d[i] = tmp[n - 1 - i];
    return n;
}

static int put_zeros(Buf *b, Py_ssize_t n)
{
    if (n <= 0)
        return 0;
    if (RESERVE(b, n) < 0)
        return -1;
    memset(b->p + b->len, '0', (size_t)n);
    b->len += n;
    return 0;
}

/* d[0].d[1..k) e x, as Python writes exponents: a sign and at least two digits */
static int put_exp_form(Buf *b, const char *d, int k, int x)
{
    char tail[8];
    int len;
    if (put_ch(b, d[0]) < 0 || (k > 1 && (put_ch(b, '.') < 0 || put(b, d + 1, k - 1) < 0)))
        return -1;
    len = snprintf(tail, sizeof tail, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
    return put(b, tail, len);
}

/* The last texts of the floats put_repr and put_g6 wrote, by the double's bits (direct-mapped,
 * FLOAT_MEMO slots each): game state repeats its floats (every value is written as text and as
 * JSON, a rotation is the same for every player of a tick), and a copy is cheaper than Ryu. */
#define FLOAT_MEMO_BITS 10
#define FLOAT_MEMO_TEXT 31 /* longest text kept ("-1.2345678901234567e-300" is 24) */
typedef struct {
    uint64_t bits;
    unsigned char len; /* 0: empty */
    char s[FLOAT_MEMO_TEXT];
} FloatMemo;
static FloatMemo repr_memo[1 << FLOAT_MEMO_BITS], g6_memo[1 << FLOAT_MEMO_BITS];

static inline FloatMemo *memo_slot(FloatMemo *memo, double x, uint64_t *bits)
{
    memcpy(bits, &x, sizeof *bits);
    return &memo[(*bits * 0x9E3779B97F4A7C15ull) >> (64 - FLOAT_MEMO_BITS)];
}

/* Keep b[start:] (what was just written for the double `bits`) in slot e when it fits. */
static inline int memo_keep(FloatMemo *e, uint64_t bits, const Buf *b, Py_ssize_t start, int rc)
{
    Py_ssize_t n = b->len - start;
    if (rc == 0 && n > 0 && n <= FLOAT_MEMO_TEXT) {
        e->bits = bits;
        e->len = (unsigned char)n;
        memcpy(e->s, b->p + start, (size_t)n);
    }
    return rc;
}

/* In a writer of x: put the remembered text and return, else note where the text starts
 * (MEMO_RETURN keeps what was written from there). */
#define MEMO_LOOKUP(memo, x)                                                                      \
    uint64_t memo_bits_;                                                                          \
    FloatMemo *memo_e_ = memo_slot((memo), (x), &memo_bits_);                                     \
    Py_ssize_t memo_start_ = b->len;                                                              \
    if (memo_e_->len && memo_e_->bits == memo_bits_)                                              \
        return put(b, memo_e_->s, memo_e_->len)
#define MEMO_RETURN(memo, expr) return memo_keep(memo_e_, memo_bits_, b, memo_start_, (expr))

/* float.__repr__ (what json writes for a float): integral values below 1e16 directly, the
 * others with Ryu's digits laid out as Python's format_float_short does for mode 'r'. */
static int put_repr(Buf *b, double x)
{
    uint64_t m;
    char d[20];
    int k, e10, decpt;
    if (x == 0)
        return signbit(x) ? PUT_LIT(b, "-0.0") : PUT_LIT(b, "0.0");
    if (fabs(x) < 1e16 && x == (double)(long long)x)
        return (put_ll(b, (long long)x) < 0 || PUT_LIT(b, ".0") < 0) ? -1 : 0;
    if (!ryu_ready || !isfinite(x))
        return put_pyos(b, x, 'r', 0, Py_DTSF_ADD_DOT_0);
    MEMO_LOOKUP(repr_memo, x);
    if (x < 0 && put_ch(b, '-') < 0)
        return -1;
    ryu(fabs(x), &m, &e10);
    k = u64_digits(m, d);
    decpt = k + e10;
    if (decpt <= -4 || decpt > 16)
        MEMO_RETURN(repr_memo, put_exp_form(b, d, k, decpt - 1));
    if (decpt <= 0)
        MEMO_RETURN(repr_memo, (PUT_LIT(b, "0.") < 0 || put_zeros(b, -decpt) < 0) ? -1 : put(b, d, k));
    if (decpt >= k)
        MEMO_RETURN(repr_memo, (put(b, d, k) < 0 || put_zeros(b, decpt - k) < 0) ? -1 : PUT_LIT(b, ".0"));
    MEMO_RETURN(repr_memo, (put(b, d, decpt) < 0 || put_ch(b, '.') < 0) ? -1 : put(b, d + decpt, k - decpt));
}

/* C "%g" (6 significant digits; Python's format(x, "g")) from the shortest digits S of a
 * normal double: no 7-digit rounding boundary lies between x and S (it would be a shorter, or
 * closer, candidate than S), so rounding S to 6 digits is rounding x - unless S is exactly 7
 * digits ending in 5 (a tie in S need not be one in x).  That case and subnormals (whose
 * precision is below 6 digits) go to PyOS_double_to_string. */
static int put_g6(Buf *b, double x)
{
    uint64_t m;
    char d[20];
    int k, e10, x10, i;
    if (!ryu_ready || !isfinite(x) || fabs(x) < DBL_MIN)
        return put_pyos(b, x, 'g', 6, 0);
    MEMO_LOOKUP(g6_memo, x);
    ryu(fabs(x), &m, &e10);
    k = u64_digits(m, d);
    x10 = k + e10 - 1; /* exponent of the first digit */
    if (k > 6) {
        if (k == 7 && d[6] == '5')
            return put_pyos(b, x, 'g', 6, 0);
        k = 6;
        if (d[6] >= '5') { /* round up, carrying */
            for (i = 5; i >= 0 && d[i] == '9'; i--)
                d[i] = '0';
            if (i >= 0) {
                d[i]++;
            } else {
                d[0] = '1';
                x10++;
            }
        }
    }
    while (k > 1 && d[k - 1] == '0')
        k--;
    if (x < 0 && put_ch(b, '-') < 0)
        return -1;
    if (x10 < -4 || x10 >= 6)
        MEMO_RETURN(g6_memo, put_exp_form(b, d, k, x10));
    if (x10 < 0)
        MEMO_RETURN(g6_memo, (PUT_LIT(b, "0.") < 0 || put_zeros(b, -x10 - 1) < 0) ? -1 : put(b, d, k));
    if (k <= x10 + 1)
        MEMO_RETURN(g6_memo, (put(b, d, k) < 0) ? -1 : put_zeros(b, x10 + 1 - k));
    MEMO_RETURN(g6_memo, (put(b, d, x10 + 1) < 0 || put_ch(b, '.') < 0) ? -1 : put(b, d + x10 + 1, k - x10 - 1));
}

/* (float)x as C (and ctypes) do it. */
static inline double f32(double x)
{
    return (double)(float)x;
}

/* Godot 3 rtosfix: "0" for zeros, the sign of a NaN, else C "%g" - which is Python's format(x,
 * "g"), PyOS_double_to_string; integral values below 1e6 print as the integer there. */
static int put_fix3(Buf *b, double x)
{
    if (x == 0)
        return put_ch(b, '0');
    if (isnan(x))
        return signbit(x) ? PUT_LIT(b, "-nan") : PUT_LIT(b, "nan");
    if (fabs(x) < 1e6 && x == (double)(long long)x)
        return put_ll(b, (long long)x);
    return put_g6(b, x);
}

/* ---- Grisu2 (Godot 4's String::num_scientific), a port of writer._grisu2 and friends ---- */
typedef struct {
    uint64_t f;
    int e, k;
} Power;

static inline int bit_length(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

static inline uint64_t mul_hi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b + ((unsigned __int128)1 << 63)) >> 64);
}

/* writer._round: walks the last digit down towards w; a digit that would leave 0-9 fails. */
static int grisu_round(char *digits, int n, uint64_t dist, uint64_t delta, uint64_t rest, uint64_t ten_k)
{
    while (rest < dist && delta - rest >= ten_k && (rest + ten_k < dist || dist - rest > rest + ten_k - dist)) {
        if (digits[n - 1] == '0')
            return -1;
        digits[n - 1]--;
        rest += ten_k;
    }
    return 0;
}

/* writer._digit_gen: digits (ASCII) into `digits` (room for 32), their count, and the exponent. */
static int grisu_digits(uint64_t lo, uint64_t w, uint64_t hi, int e, int exp10, char *digits, int *count,
                        int *exponent)
{
    uint64_t delta = hi - lo, dist = hi - w, one, p1, p2, pow10 = 1, rest;
    int sh = -e, n = 0, kappa, m = 0;
    if (sh <= 0 || sh >= 64)
        return -1;
    one = 1ull << sh;
    p1 = hi >> sh;
    p2 = hi & (one - 1);
    kappa = 1; /* digits of p1 (1 for 0), pow10 = 10^(kappa - 1) */
    for (uint64_t t = p1 / 10; t; t /= 10) {
        kappa++;
        pow10 *= 10;
    }
    while (kappa > 0) {
        uint64_t d = p1 / pow10;
        p1 %= pow10;
        if (d > 9 || n >= 30)
            return -1;
        digits[n++] = (char)('0' + d);
        kappa--;
        rest = (p1 << sh) + p2;
        if (rest <= delta) {
            if (grisu_round(digits, n, dist, delta, rest, pow10 << sh) < 0)
                return -1;
            *count = n;
            *exponent = exp10 + kappa;
            return 0;
        }
        pow10 /= 10;
    }
    for (;;) {
        uint64_t d;
        p2 *= 10;
        d = p2 >> sh;
        if (d > 9 || n >= 30)
            return -1;
        digits[n++] = (char)('0' + d);
        p2 &= one - 1;
        m++;
        delta *= 10;
        dist *= 10;
        if (p2 <= delta)
            break;
    }
    if (grisu_round(digits, n, dist, delta, p2, one) < 0)
        return -1;
    *count = n;
    *exponent = exp10 - m;
    return 0;
}

/* writer._grisu2 of a finite x > 0; `single`: x is a float32 and gets float32 boundaries. */
static int grisu2(const Power *powers, int npowers, double x, int single, char *digits, int *count,
                  int *exponent)
{
    uint64_t bits, hidden, big_e, frac, vf, mpf, mmf, wf;
    int p, bias, ve, mpe, mme, shift, f, k, idx;
    const Power *c;
    if (single) {
        float fx = (float)x;
        uint32_t b32;
        memcpy(&b32, &fx, 4);
        bits = b32;
        p = 24;
        bias = 150;
    } else {
        memcpy(&bits, &x, 8);
        p = 53;
        bias = 1075;
    }
    hidden = 1ull << (p - 1);
    big_e = bits >> (p - 1);
    frac = bits & (hidden - 1);
    if (big_e == 0) {
        vf = frac;
        ve = 1 - bias;
    } else {
        vf = frac + hidden;
        ve = (int)big_e - bias;
    }
    if (vf == 0)
        return -1;
    /* m_plus = normalize(2v + 1, e - 1) */
    mpf = 2 * vf + 1;
    shift = 64 - bit_length(mpf);
    mpe = ve - 1 - shift;
    mpf <<= shift;
    if (frac == 0 && big_e > 1) {
        mmf = 4 * vf - 1;
        mme = ve - 2;
    } else {
        mmf = 2 * vf - 1;
        mme = ve - 1;
    }
    if (mme - mpe < 0 || mme - mpe > 63)
        return -1;
    mmf <<= (mme - mpe);
    shift = 64 - bit_length(vf);
    wf = vf << shift;
    f = -60 - mpe - 1;
    k = (int)(((long long)(f < 0 ? -f : f) * 78913) >> 18);
    k = (f < 0 ? -k : k) + (f > 0);
    idx = 300 + k + 7;
    idx = idx >= 0 ? idx / 8 : -((-idx + 7) / 8); /* Python's floor division */
    if (idx < 0 || idx >= npowers)
        return -1;
    c = &powers[idx];
    {
        uint64_t w = mul_hi(wf, c->f);
        uint64_t lo = mul_hi(mmf, c->f) + 1;
        uint64_t hi = mul_hi(mpf, c->f) - 1;
        int e = mpe + c->e + 64;
        return grisu_digits(lo, w, hi, e, -c->k, digits, count, exponent);
    }
}

/* writer._format_buffer */
static int put_grisu_format(Buf *b, const char *digits, int k, int exp10)
{
    int n = k + exp10;
    if (k <= n && n <= 15) {
        if (put(b, digits, k) < 0 || RESERVE(b, n - k) < 0)
            return -1;
        memset(b->p + b->len, '0', (size_t)(n - k));
        b->len += n - k;
        return 0;
    }
    if (0 < n && n <= 15)
        return (put(b, digits, n) < 0 || put_ch(b, '.') < 0 || put(b, digits + n, k - n) < 0) ? -1 : 0;
    if (-4 < n && n <= 0) {
        if (PUT_LIT(b, "0.") < 0 || RESERVE(b, -n) < 0)
            return -1;
        memset(b->p + b->len, '0', (size_t)-n);
        b->len += -n;
        return put(b, digits, k);
    }
    {
        char tail[8];
        int x = n - 1, len;
        if (put_ch(b, digits[0]) < 0)
            return -1;
        if (k > 1 && (put_ch(b, '.') < 0 || put(b, digits + 1, k - 1) < 0))
            return -1;
        len = snprintf(tail, sizeof tail, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
        return put(b, tail, len);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Class -> entry lookup, shared by both writers: a direct-mapped cache in front of a dict that
 * keeps every cached class alive (so a cached type pointer is never a recycled address).
 * ------------------------------------------------------------------------------------------- */
typedef struct {
    PyTypeObject *type;
    const void *entry;
} Slot;

static const void *lookup(Slot *cache, PyObject *index, const char *entries, size_t size, PyTypeObject *tp)
{
    size_t slot = ((uintptr_t)tp >> 4) & (TYPE_CACHE - 1);
    PyObject *idx;
    if (cache[slot].type == tp)
        return cache[slot].entry;
    if ((idx = PyDict_GetItemWithError(index, (PyObject *)tp)) == NULL)
        return NULL;
    cache[slot].type = tp;
    cache[slot].entry = entries + size * (size_t)PyLong_AsSsize_t(idx);
    return cache[slot].entry;
}

/* dict {class: entry tuple} -> index dict {class: i} and the tuples in order, for a parser. */
static PyObject *index_entries(PyObject *entries, PyObject **index)
{
    PyObject *k, *v, *list;
    Py_ssize_t pos = 0, i = 0;
    if (!PyDict_Check(entries)) {
        PyErr_SetString(PyExc_TypeError, "entries must be a dict {class: tuple}");
        return NULL;
    }
    if ((*index = PyDict_New()) == NULL || (list = PyList_New(0)) == NULL) {
        Py_CLEAR(*index);
        return NULL;
    }
    while (PyDict_Next(entries, &pos, &k, &v)) {
        PyObject *n;
        if (!PyType_Check(k) || !PyTuple_Check(v)) {
            PyErr_SetString(PyExc_TypeError, "entries must be a dict {class: tuple}");
            goto fail;
        }
        if ((n = PyLong_FromSsize_t(i++)) == NULL || PyDict_SetItem(*index, k, n) < 0
            || PyList_Append(list, v) < 0) {
            Py_XDECREF(n);
            goto fail;
        }
        Py_DECREF(n);
    }
    return list;
fail:
    Py_CLEAR(*index);
    Py_DECREF(list);
    return NULL;
}

/* array.array storage of a packed array: its buffer (format f, d, i or q), else -1. */
static int packed_buffer(PyObject *v, PyObject *attr, Py_buffer *view, char *format, PyObject **arr)
{
    if ((*arr = PyObject_GetAttr(v, attr)) == NULL)
        return -1;
    if (PyObject_GetBuffer(*arr, view, PyBUF_FORMAT) < 0) {
        Py_CLEAR(*arr);
        return -1;
    }
    *format = (view->format && view->format[0] && !view->format[1]) ? view->format[0] : 0;
    if (!((*format == 'f' && view->itemsize == 4) || (*format == 'd' && view->itemsize == 8)
          || (*format == 'i' && view->itemsize == 4) || (*format == 'q' && view->itemsize == 8))) {
        PyBuffer_Release(view);
        Py_CLEAR(*arr);
        return -1;
    }
    return 0;
}

static inline double packed_real(const char *p, char format)
{
    float f;
    double d;
    if (format == 'f') {
        memcpy(&f, p, 4);
        return f;
    }
    memcpy(&d, p, 8);
    return d;
}

static inline long long packed_int(const char *p, char format)
{
    int32_t i;
    long long q;
    if (format == 'i') {
        memcpy(&i, p, 4);
        return i;
    }
    memcpy(&q, p, 8);
    return q;
}

static PyObject *str_array; /* interned "array": PackedArray's storage attribute */

/* =============================================================================================
 * Text notation
 * =========================================================================================== */
enum {
    TK_NIL, TK_BOOL, TK_INT, TK_FLOAT, TK_STRING, TK_STRING_NAME, TK_STRUCT, TK_RID, TK_OBJECT_ID,
    TK_CONST, TK_ARRAY, TK_DICT, TK_PACKED_BYTES, TK_PACKED_STRINGS, TK_PACKED, TK_COUNT
};

static const char *const TEXT_KIND_NAMES[TK_COUNT] = {
    "nil", "bool", "int", "float", "string", "string_name", "struct", "rid", "object_id", "const",
    "array", "dict", "packed_bytes", "packed_strings", "packed",
};

typedef struct {
    int kind;
    int rank;       /* Variant type id: the first criterion of the key order */
    int keyable;    /* may be a Dictionary key here (see sort_pairs) */
    Str name;       /* engine type name; TK_CONST: the whole text */
    PyObject *plan; /* TK_STRUCT */
    Py_ssize_t n;   /* TK_STRUCT: components */
    int is_int;     /* TK_STRUCT, TK_PACKED: integer components */
    int single;     /* TK_STRUCT, TK_PACKED: real components rounded to float32 first */
} TEntry;

typedef struct {
    unsigned char n;
    char s[ESC_MAX];
} Esc;

/* The punctuation of one engine family (writer.Style; fast.py passes it in STYLE_FIELDS order). */
enum { ST_CALL_OPEN, ST_CALL_CLOSE, ST_SEP, ST_ARRAY_OPEN, ST_ARRAY_CLOSE, ST_DICT_OPEN, ST_DICT_SEP,
       ST_KV, ST_DICT_CLOSE, ST_DICT_EMPTY, ST_COUNT };

static const char *const STYLE_FIELD_NAMES[ST_COUNT] = {
    "call_open", "call_close", "sep", "array_open", "array_close", "dict_open", "dict_sep", "kv",
    "dict_close", "dict_empty",
};

typedef struct {
    PyObject_HEAD
    TEntry *entries;
    Py_ssize_t nentries;
    PyObject *index;
    Slot cache[TYPE_CACHE];
    int g4;           /* Godot 4 number formatting and String/StringName keys compared as text */
    int float_single; /* float values rounded to float32 before printing (Godot 3 single builds) */
    int max_depth;    /* containers deeper than this print empty; -1: no limit */
    Str style[ST_COUNT];
    Esc esc_string[128], esc_name[128], esc_path[128];
    Power *powers;
    int npowers;
    /* jsonl's "text" field: a copy of this writer whose output is that text already JSON-escaped (its
     * punctuation and escape tables escaped once, here), so the record's line takes the text in one pass
     * instead of writing it and escaping it again. Built at first use (json_twin); jesc: this is such a copy. */
    void *jtwin;
    int jtwin_state; /* 0: not tried yet, 1: built, -1: this writer's text cannot be escaped ahead */
    int jesc;
} TextWriter;

/* the quote around a string in the text ('"', or '\"' when the text is written JSON-escaped) */
static void json_twin_free(TextWriter *t);

#define PUT_QUOTE(w, b) ((w)->jesc ? PUT_LIT(b, "\\\"") : put_ch(b, '"'))

static int put_real(TextWriter *w, Buf *b, double x);

/* writer.num_scientific */
static int put_scientific(TextWriter *w, Buf *b, double x, int single)
{
    char digits[32];
    int k, exp10;
    if (isnan(x))
        return PUT_LIT(b, "nan");
    if (isinf(x))
        return x > 0 ? PUT_LIT(b, "inf") : PUT_LIT(b, "-inf");
    if (x == 0)
        return signbit(x) ? PUT_LIT(b, "-0") : put_ch(b, '0');
    if (grisu2(w->powers, w->npowers, fabs(x), single, digits, &k, &exp10) < 0)
        return -1;
    if (x < 0 && put_ch(b, '-') < 0)
        return -1;
    return put_grisu_format(b, digits, k, exp10);
}

/* writer.rtos_fix3 / rtos_fix4 */
static int put_real(TextWriter *w, Buf *b, double x)
{
    if (!w->g4)
        return put_fix3(b, x);
    if (x == 0)
        return put_ch(b, '0');
    if (isinf(x) && x < 0)
        return PUT_LIT(b, "inf_neg");
    return put_scientific(w, b, x, f32(x) == x);
}

/* writer._Writer.float_text: ".0" unless inf/nan or the text has a point or an exponent */
static int put_float_text(TextWriter *w, Buf *b, double x)
{
    Py_ssize_t start = b->len, i;
    const char *s;
    if (put_real(w, b, w->float_single ? f32(x) : x) < 0)
        return -1;
    s = b->p + start;
    if (b->len - start == 3 && (memcmp(s, "inf", 3) == 0 || memcmp(s, "nan", 3) == 0))
        return 0;
    for (i = 0; i < b->len - start; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
            return 0;
    return PUT_LIT(b, ".0");
}

/* A component of a struct or packed element (writer._Writer.component). */
static int put_component_obj(TextWriter *w, Buf *b, PyObject *c, const TEntry *e)
{
    if (e->is_int)
        return PyLong_CheckExact(c) ? put_pyint(b, c) : -1;
    if (!PyFloat_CheckExact(c))
        return -1;
    return put_real(w, b, e->single ? f32(PyFloat_AS_DOUBLE(c)) : PyFloat_AS_DOUBLE(c));
}

/* s.translate(esc) between the quotes the caller writes (lone surrogates as \udXXX, as the
 * writer's tables have them) */
static int put_escaped(Buf *b, PyObject *s, const Esc *esc)
{
    Py_ssize_t n, i = 0;
    int ascii;
    const unsigned char *p;
    PyObject *tmp;
    if (!PyUnicode_Check(s) || (p = (const unsigned char *)utf8_any(s, &n, &ascii, &tmp)) == NULL)
        return -1;
    if (!ascii)
        b->ascii = 0;
    while (i < n) { /* room for the worst case, a chunk at a time (a surrogate may end past it) */
        Py_ssize_t end = n - i < ESC_CHUNK ? n : i + ESC_CHUNK;
        char *o;
        if (RESERVE(b, (end - i) * ESC_MAX + SURROGATE_ESC) < 0) {
            Py_XDECREF(tmp);
            return -1;
        }
        o = b->p + b->len;
        for (; i < end; i++) {
            unsigned char c = p[i];
            if (c < 128 && esc[c].n) {
                memcpy(o, esc[c].s, ESC_MAX);
                o += esc[c].n;
            } else if (tmp != NULL && is_surrogate(p, i)) {
                o = put_surrogate(o, p + i);
                i += 2;
            } else {
                *o++ = (char)c;
            }
        }
        b->len = o - b->p;
    }
    Py_XDECREF(tmp);
    return 0;
}

typedef struct {
    PyObject *k, *v;
    const TEntry *e;
    double d; /* float keys */
} Pair;

/* Key order: Variant::operator< as writer._Order.less has it for the keys allowed here (null,
 * bool, int, float, String, StringName).  Those are totally ordered (fast.py checks that their
 * ranks put the string-like ones last) and dictionary keys are distinct, so any correct sort
 * gives the engine's introsort result.  1: a < b, 0: not, -1: error. */
static int pair_less(const TextWriter *w, const Pair *a, const Pair *b)
{
    int sa = a->e->kind == TK_STRING || a->e->kind == TK_STRING_NAME;
    int sb = b->e->kind == TK_STRING || b->e->kind == TK_STRING_NAME;
    if (!(w->g4 && sa && sb) && a->e->rank != b->e->rank)
        return a->e->rank < b->e->rank;
    if (sa) {
        int c;
        if (PyUnicode_IS_COMPACT_ASCII(a->k) && PyUnicode_IS_COMPACT_ASCII(b->k)) {
            /* code point order is byte order (PyUnicode_Compare's answer, without its checks and call) */
            Py_ssize_t na = PyUnicode_GET_LENGTH(a->k), nb = PyUnicode_GET_LENGTH(b->k);
            c = memcmp(PyUnicode_DATA(a->k), PyUnicode_DATA(b->k), (size_t)(na < nb ? na : nb));
            return c < 0 || (c == 0 && na < nb);
        }
        c = PyUnicode_Compare(a->k, b->k);
        return (c == -1 && PyErr_Occurred()) ? -1 : c < 0;
    }
    switch (a->e->kind) {
    case TK_FLOAT: return a->d < b->d;
    case TK_INT: return PyObject_RichCompareBool(a->k, b->k, Py_LT);
    case TK_BOOL: return a->k == Py_False && b->k == Py_True;
    }
    return 0;
}

static int sort_pairs(const TextWriter *w, Pair *a, Py_ssize_t n, Pair *tmp)
{
    Py_ssize_t width, i, j, lo, mid, hi, o;
    if (n <= PAIRS_LOCAL) { /* insertion sort */
        for (i = 1; i < n; i++) {
            Pair x = a[i];
            for (j = i; j > 0; j--) {
                int lt = pair_less(w, &x, &a[j - 1]);
                if (lt < 0)
                    return -1;
                if (!lt)
                    break;
                a[j] = a[j - 1];
            }
            a[j] = x;
        }
        return 0;
    }
    for (width = 1; width < n; width *= 2) { /* bottom-up merge sort */
        for (lo = 0; lo < n; lo += 2 * width) {
            mid = lo + width < n ? lo + width : n;
            hi = lo + 2 * width < n ? lo + 2 * width : n;
            i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                int lt = pair_less(w, &a[j], &a[i]);
                if (lt < 0)
                    return -1;
                tmp[o++] = lt ? a[j++] : a[i++];
            }
            while (i < mid)
                tmp[o++] = a[i++];
            while (j < hi)
                tmp[o++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof(Pair));
    }
    return 0;
}

static const TEntry *text_entry(TextWriter *w, PyTypeObject *tp)
{
    return lookup(w->cache, w->index, (const char *)w->entries, sizeof(TEntry), tp);
}

static int text_value(TextWriter *w, Buf *b, PyObject *v, int depth);

static int text_dict(TextWriter *w, Buf *b, PyObject *v, int depth)
{
    Pair local[PAIRS_LOCAL], *pairs = local, *tmp = NULL;
    Py_ssize_t n = PyDict_GET_SIZE(v), pos = 0, i = 0;
    PyObject *k, *x;
    int rc = -1;
    if (n == 0 || (w->max_depth >= 0 && depth > w->max_depth))
        return PUT_STR(b, w->style[ST_DICT_EMPTY]);
    if (n > PAIRS_LOCAL) {
        if ((size_t)n > PY_SSIZE_T_MAX / (2 * sizeof(Pair))
            || (pairs = PyMem_Malloc((size_t)n * 2 * sizeof(Pair))) == NULL)
            return -1;
        tmp = pairs + n;
    }
    while (PyDict_Next(v, &pos, &k, &x)) {
        const TEntry *e = text_entry(w, Py_TYPE(k));
        if (e == NULL || !e->keyable || i >= n)
            goto done;
        pairs[i].k = k;
        pairs[i].v = x;
        pairs[i].e = e;
        if (e->kind == TK_FLOAT && isnan(pairs[i].d = PyFloat_AS_DOUBLE(k)))
            goto done; /* NaN keys do not compare */
        i++;
    }
    if (i != n || sort_pairs(w, pairs, n, tmp) < 0 || PUT_STR(b, w->style[ST_DICT_OPEN]) < 0)
        goto done;
    for (i = 0; i < n; i++) {
        if ((i && PUT_STR(b, w->style[ST_DICT_SEP]) < 0) || text_value(w, b, pairs[i].k, depth + 1) < 0
            || PUT_STR(b, w->style[ST_KV]) < 0 || text_value(w, b, pairs[i].v, depth + 1) < 0)
            goto done;
    }
    rc = PUT_STR(b, w->style[ST_DICT_CLOSE]);
done:
    if (pairs != local)
        PyMem_Free(pairs);
    return rc;
}

static int text_array(TextWriter *w, Buf *b, PyObject *v, int depth)
{
    Py_ssize_t i;
    if (PUT_STR(b, w->style[ST_ARRAY_OPEN]) < 0)
        return -1;
    if (w->max_depth < 0 || depth <= w->max_depth) {
        for (i = 0; i < Py_SIZE(v); i++) {
            PyObject *x = PyList_Check(v) ? PyList_GET_ITEM(v, i) : PyTuple_GET_ITEM(v, i);
            if ((i && PUT_STR(b, w->style[ST_SEP]) < 0) || text_value(w, b, x, depth + 1) < 0)
                return -1;
        }
    }
    return PUT_STR(b, w->style[ST_ARRAY_CLOSE]);
}

/* name(open) part, part, ...(close) for struct and packed values */
static int text_struct(TextWriter *w, Buf *b, PyObject *v, const TEntry *e)
{
    PyObject *vals[MAX_LEAVES];
    Py_ssize_t i;
    if (plan_flatten(e->plan, v, vals) < 0 || PUT_STR(b, e->name) < 0 || PUT_STR(b, w->style[ST_CALL_OPEN]) < 0)
        return -1;
    for (i = 0; i < e->n; i++)
        if ((i && PUT_STR(b, w->style[ST_SEP]) < 0) || put_component_obj(w, b, vals[i], e) < 0)
            return -1;
    return PUT_STR(b, w->style[ST_CALL_CLOSE]);
}

static int text_packed(TextWriter *w, Buf *b, PyObject *v, const TEntry *e)
{
    Py_buffer view;
    PyObject *arr;
    Py_ssize_t i, count;
    char format;
    int rc = -1;
    if (packed_buffer(v, str_array, &view, &format, &arr) < 0)
        return -1;
    if ((format == 'i' || format == 'q') != e->is_int)
        goto done; /* int(x) / float(x) conversions: Python's */
    if (PUT_STR(b, e->name) < 0 || PUT_STR(b, w->style[ST_CALL_OPEN]) < 0)
        goto done;
    count = view.len / view.itemsize;
    for (i = 0; i < count; i++) {
        const char *p = (const char *)view.buf + i * view.itemsize;
        if (i && PUT_STR(b, w->style[ST_SEP]) < 0)
            goto done;
        if (e->is_int ? put_ll(b, packed_int(p, format)) < 0
                      : put_real(w, b, e->single ? f32(packed_real(p, format)) : packed_real(p, format)) < 0)
            goto done;
    }
    rc = PUT_STR(b, w->style[ST_CALL_CLOSE]);
done:
    PyBuffer_Release(&view);
    Py_DECREF(arr);
    return rc;
}

static int text_packed_bytes(TextWriter *w, Buf *b, PyObject *v, const TEntry *e)
{
    const unsigned char *p = (const unsigned char *)(PyBytes_Check(v) ? PyBytes_AS_STRING(v) : PyByteArray_AS_STRING(v));
    Py_ssize_t i, n = PyBytes_Check(v) ? PyBytes_GET_SIZE(v) : PyByteArray_GET_SIZE(v);
    if (PUT_STR(b, e->name) < 0 || PUT_STR(b, w->style[ST_CALL_OPEN]) < 0)
        return -1;
    for (i = 0; i < n; i++)
        if ((i && PUT_STR(b, w->style[ST_SEP]) < 0) || put_ll(b, p[i]) < 0)
            return -1;
    return PUT_STR(b, w->style[ST_CALL_CLOSE]);
}

static int text_packed_strings(TextWriter *w, Buf *b, PyObject *v, const TEntry *e)
{
    Py_ssize_t i;
    if (PUT_STR(b, e->name) < 0 || PUT_STR(b, w->style[ST_CALL_OPEN]) < 0)
        return -1;
    for (i = 0; i < PyTuple_GET_SIZE(v); i++) {
        PyObject *s = PyTuple_GET_ITEM(v, i);
        if ((i && PUT_STR(b, w->style[ST_SEP]) < 0) || !PyUnicode_CheckExact(s) || PUT_QUOTE(w, b) < 0
            || put_escaped(b, s, w->esc_path) < 0 || PUT_QUOTE(w, b) < 0)
            return -1;
    }
    return PUT_STR(b, w->style[ST_CALL_CLOSE]);
}

/* Field 0 of a one-field NamedTuple (RID, ObjectID) as an int (`exact`: a plain int), or NULL. */
static PyObject *id_field(PyObject *v, int exact)
{
    PyObject *id;
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 1)
        return NULL;
    id = PyTuple_GET_ITEM(v, 0);
    return (exact ? PyLong_CheckExact(id) : PyLong_Check(id)) ? id : NULL;
}

static int text_value(TextWriter *w, Buf *b, PyObject *v, int depth)
{
    PyTypeObject *tp = Py_TYPE(v);
    const TEntry *e;
    PyObject *id;
    if (depth > RENDER_MAX_DEPTH)
        return -1;
    /* the common leaves first, as the pure writer does */
    if (tp == &PyUnicode_Type)
        return (PUT_QUOTE(w, b) < 0 || put_escaped(b, v, w->esc_string) < 0) ? -1 : PUT_QUOTE(w, b);
    if (tp == &PyLong_Type)
        return put_int64(b, v);
    if (tp == &PyFloat_Type)
        return put_float_text(w, b, PyFloat_AS_DOUBLE(v));
    if (tp == &PyBool_Type)
        return v == Py_True ? PUT_LIT(b, "true") : PUT_LIT(b, "false");
    if ((e = text_entry(w, tp)) == NULL)
        return -1; /* not a type of this dialect, or one Python writes */
    switch (e->kind) {
    case TK_NIL:
        return PUT_LIT(b, "null");
    case TK_INT:
        return put_int64(b, v);
    case TK_FLOAT:
        return put_float_text(w, b, PyFloat_AS_DOUBLE(v));
    case TK_STRING:
        return (PUT_QUOTE(w, b) < 0 || put_escaped(b, v, w->esc_string) < 0) ? -1 : PUT_QUOTE(w, b);
    case TK_STRING_NAME:
        return ((w->jesc ? PUT_LIT(b, "&\\\"") : PUT_LIT(b, "&\"")) < 0 || put_escaped(b, v, w->esc_name) < 0) ? -1
                                                                                                  : PUT_QUOTE(w, b);
    case TK_STRUCT:
        return text_struct(w, b, v, e);
    case TK_RID: {
        long long rid;
        if (!w->g4)
            return 0; /* Godot 3's writer has no case for RID: nothing */
        if ((id = id_field(v, 0)) == NULL)
            return -1;
        rid = (long long)PyLong_AsUnsignedLongLongMask(id);
        if (rid == -1 && PyErr_Occurred())
            return -1;
        if (PUT_STR(b, e->name) < 0 || PUT_STR(b, w->style[ST_CALL_OPEN]) < 0 || (rid && put_ll(b, rid) < 0))
            return -1;
        return PUT_STR(b, w->style[ST_CALL_CLOSE]);
    }
    case TK_OBJECT_ID: { /* null for id 0; the EncodedObjectAsID form is Python's */
        int zero;
        if ((id = id_field(v, 0)) == NULL || (zero = PyObject_Not(id)) != 1)
            return -1;
        return PUT_LIT(b, "null");
    }
    case TK_CONST:
        return PUT_STR(b, e->name);
    case TK_ARRAY:
        return text_array(w, b, v, depth);
    case TK_DICT:
        return text_dict(w, b, v, depth);
    case TK_PACKED_BYTES:
        return text_packed_bytes(w, b, v, e);
    case TK_PACKED_STRINGS:
        return text_packed_strings(w, b, v, e);
    case TK_PACKED:
        return text_packed(w, b, v, e);
    }
    return -1;
}

/* The written text as a str, or None when the writer left the value to the pure one (rc != 0). */
static PyObject *rendered_or_none(Buf *b, int rc)
{
    PyObject *s = rc == 0 ? buf_str(b) : NULL;
    buf_free(b);
    if (s == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return s;
}

static PyObject *TextWriter_render(TextWriter *self, PyObject *value)
{
    Buf b;
    buf_init(&b);
    return rendered_or_none(&b, text_value(self, &b, value, 0));
}

/* TextWriter.render_start(value, nbytes) -> (text, complete): the whole text (complete True), or
 * (False) a start of it of at least nbytes UTF-8 bytes, cut at the first piece of output written
 * past them, for one-line summaries; None when the writer left the value to the pure one. */
static PyObject *TextWriter_render_start(TextWriter *self, PyObject *const *args, Py_ssize_t nargs)
{
    Buf b;
    Py_ssize_t n;
    int rc;
    PyObject *s;
    if (nargs != 2 || (n = PyLong_AsSsize_t(args[1])) < 1 || n > BUF_LOCAL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "render_start(value, nbytes), 1 <= nbytes <= 4096");
        return NULL;
    }
    buf_init(&b);
    b.capped = n;
    b.cap = n;
    rc = text_value(self, &b, args[0], 0);
    if (rc != 0 && !b.cut) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyErr_Clear();
    if ((s = buf_str(&b)) == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(NO)", s, rc == 0 ? Py_True : Py_False);
}

/* The record attributes the JSON head starts with, in records.Record._head's order (interned once). */
enum { RA_FRAME, RA_TIME, RA_SRC, RA_SPORT, RA_DST, RA_DPORT, RA_TRANSPORT, RA_DIRECTION, RA_KIND, RA_DIALECT,
       RA_OFFSET, RA_RAW, RA_WIRE, RA_APP, RA_VALUE, RA_COUNT };
static const char *const RECORD_ATTRS[RA_COUNT] = {"frame", "time", "src", "sport", "dst", "dport", "transport",
    "direction", "kind", "dialect", "offset", "raw", "wire_bytes", "app_bytes", "value"};
static PyObject *record_attr[RA_COUNT];

/* Interns the attribute names once; -1 on failure (an exception set). */
static int record_attrs_ready(void)
{
    int i;
    if (record_attr[0] == NULL)
        for (i = 0; i < RA_COUNT; i++)
            if ((record_attr[i] = PyUnicode_InternFromString(RECORD_ATTRS[i])) == NULL)
                return -1;
    return 0;
}

/* An ASCII str, written as it is; -1 (bail) for anything else. */
static int put_ascii(Buf *b, PyObject *v)
{
    return PyUnicode_CheckExact(v) && PyUnicode_IS_ASCII(v) ? put(b, (const char *)PyUnicode_DATA(v),
                                                                  PyUnicode_GET_LENGTH(v)) : -1;
}

/* An int as str() writes it, right-aligned in `width` columns; -1 (bail) for anything else. */
static int put_int_width(Buf *b, PyObject *v, int width)
{
    Py_ssize_t start = b->len, n;
    if (!PyLong_CheckExact(v) || put_pyint(b, v) < 0)
        return -1;
    n = b->len - start;
    if (n < width) { /* shift right, pad with spaces */
        if (RESERVE(b, width - n) < 0)
            return -1;
        memmove(b->p + start + (width - n), b->p + start, (size_t)n);
        memset(b->p + start, ' ', (size_t)(width - n));
        b->len += width - n;
    }
    return 0;
}

/* A str as it is (its UTF-8), e.g. an arrow. */
static int put_raw_str(Buf *b, PyObject *s)
{
    Py_ssize_t n;
    int ascii;
    const char *p = utf8_of(s, &n, &ascii);
    if (p == NULL)
        return -1;
    if (!ascii)
        b->ascii = 0;
    return put(b, p, n);
}

static int put_fixed6(Buf *b, double x);

/* The default `read` output line of a plain Variant record (read_cmds._write and _summary):
 *     f"{frame:>7} {time:.6f} {src}:{sport} {ends} {dst}:{dport} {transport} {arrow} {dialect} {kind} "
 *     f"{message + ' ' if message is not None else ''}{type} {text}\n"
 * from the record's attributes a[RA_...] and its message `msg`, where text is the value's text with
 * newlines as spaces, cut to chars - 3 characters and "..." when longer than chars; arrows = (ends,
 * the c2s arrow, the s2c arrow). NULL (maybe with an exception) when anything but the arrows is not
 * ASCII or not as expected: Python writes that line. */
static PyObject *summary_write(TextWriter *self, PyObject *const *a, PyObject *msg, PyObject *type,
                               Py_ssize_t chars, PyObject *arrows)
{
    Buf b, t;
    PyObject *s = NULL;
    Py_ssize_t i;
    int rc = -1, complete, cut, c2s;
    for (i = 0; i < 3; i++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(arrows, i)))
            return NULL;
    if (!PyUnicode_CheckExact(type) || !PyUnicode_IS_ASCII(type))
        return NULL;
    buf_init(&b);
    buf_init(&t);
    /* the value's text, at most chars + 1 bytes of it; ASCII only, so that a byte is a character */
    t.capped = t.cap = chars + 1;
    complete = text_value(self, &t, a[RA_VALUE], 0) == 0;
    PyErr_Clear();
    if (!t.ascii || (!complete && !t.cut))
        goto done; /* not ASCII, or not written here */
    cut = t.len > chars;
    if (!PyFloat_CheckExact(a[RA_TIME]) || !PyUnicode_CheckExact(a[RA_DIRECTION]))
        goto done;
    c2s = PyUnicode_CompareWithASCIIString(a[RA_DIRECTION], "c2s") == 0;
    if (put_int_width(&b, a[RA_FRAME], 7) < 0 || put_ch(&b, ' ') < 0)
        goto done;
    if (put_fixed6(&b, PyFloat_AS_DOUBLE(a[RA_TIME])) < 0 || put_ch(&b, ' ') < 0
        || put_ascii(&b, a[RA_SRC]) < 0 || put_ch(&b, ':') < 0 || put_int_width(&b, a[RA_SPORT], 0) < 0
        || put_ch(&b, ' ') < 0 || put_raw_str(&b, PyTuple_GET_ITEM(arrows, 0)) < 0 || put_ch(&b, ' ') < 0
        || put_ascii(&b, a[RA_DST]) < 0 || put_ch(&b, ':') < 0 || put_int_width(&b, a[RA_DPORT], 0) < 0
        || put_ch(&b, ' ') < 0 || put_ascii(&b, a[RA_TRANSPORT]) < 0 || put_ch(&b, ' ') < 0
        || put_raw_str(&b, PyTuple_GET_ITEM(arrows, c2s ? 1 : 2)) < 0 || put_ch(&b, ' ') < 0
        || put_ascii(&b, a[RA_DIALECT]) < 0 || put_ch(&b, ' ') < 0
        || put_ascii(&b, a[RA_KIND]) < 0 || put_ch(&b, ' ') < 0)
        goto done;
    if (msg != Py_None && (put_ascii(&b, msg) < 0 || put_ch(&b, ' ') < 0))
        goto done;
    if (put(&b, (const char *)PyUnicode_DATA(type), PyUnicode_GET_LENGTH(type)) < 0 || put_ch(&b, ' ') < 0)
        goto done;
    if (cut) /* (a cut text has more than chars bytes) */
        t.len = chars - 3;
    for (i = 0; i < t.len; i++)
        if (t.p[i] == '\n')
            t.p[i] = ' ';
    if (put(&b, t.p, t.len) < 0 || (cut && PUT_LIT(&b, "...") < 0) || put_ch(&b, '\n') < 0)
        goto done;
    rc = 0;
done:
    if (rc == 0)
        s = buf_str(&b);
    buf_free(&b);
    buf_free(&t);
    return s;
}

/* chars of summary_line and variant_summary: 3 <= chars < BUF_LOCAL; -1 with an exception else. */
static Py_ssize_t summary_chars(PyObject *o)
{
    Py_ssize_t chars = PyLong_AsSsize_t(o);
    if (chars < 3 || chars >= BUF_LOCAL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "summary_line: 3 <= chars < 4096");
        return -1;
    }
    return chars;
}

/* TextWriter.summary_line(rec, type, chars, arrows) -> summary_write's line of a record, read off its
 * attributes; None: Python writes that line. */
static PyObject *TextWriter_summary_line(TextWriter *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const int used[] = {RA_FRAME, RA_TIME, RA_SRC, RA_SPORT, RA_DST, RA_DPORT, RA_TRANSPORT, RA_DIRECTION,
                               RA_KIND, RA_DIALECT, RA_VALUE};
    PyObject *a[RA_COUNT] = {NULL}, *msg = NULL, *s = NULL;
    Py_ssize_t chars, i;
    if (nargs != 4 || !PyTuple_CheckExact(args[3]) || PyTuple_GET_SIZE(args[3]) != 3) {
        PyErr_SetString(PyExc_TypeError, "summary_line(rec, type, chars, arrows)");
        return NULL;
    }
    if ((chars = summary_chars(args[2])) < 0 || record_attrs_ready() < 0)
        return NULL;
    for (i = 0; i < (Py_ssize_t)(sizeof(used) / sizeof(used[0])); i++)
        if ((a[used[i]] = PyObject_GetAttr(args[0], record_attr[used[i]])) == NULL)
            goto done;
    if ((msg = PyObject_GetAttrString(args[0], "message")) == NULL)
        goto done;
    s = summary_write(self, a, msg, args[1], chars, args[3]);
done:
    for (i = 0; i < RA_COUNT; i++)
        Py_XDECREF(a[i]);
    Py_XDECREF(msg);
    if (s == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return s;
}

static PyObject *variant_kind; /* "variant", the kind of the records variant_summary and variant_line write */

/* The value of a message body and its type name, for variant_summary and variant_line: 0, or -1
 * (bail: not decoded here, or a class type_names does not name yet). */
static int decode_named(PyObject *table, PyObject *type_names, PyObject *max_depth, PyObject *body,
                        PyObject **value, PyObject **type)
{
    long long depth;
    if (variant_kind == NULL && (variant_kind = PyUnicode_InternFromString("variant")) == NULL)
        return -1;
    if (!PyDict_CheckExact(type_names) || !PyLong_CheckExact(max_depth) || !PyBytes_CheckExact(body))
        return -1;
    depth = PyLong_AsLongLong(max_depth);
    if (depth == -1 && PyErr_Occurred())
        return -1;
    if ((*value = codec_decode_body(table, body, depth)) == NULL)
        return -1;
    *type = PyDict_GetItemWithError(type_names, (PyObject *)Py_TYPE(*value)); /* borrowed */
    if (*type == NULL) {
        Py_CLEAR(*value);
        return -1;
    }
    return 0;
}

/* The head arguments of variant_summary and variant_line, in a[RA_...]: frame, time, src, sport, dst,
 * dport, transport, direction, dialect, offset, wire (borrowed), the kind "variant", raw = body. */
#define VARIANT_HEAD 11
static void variant_head(PyObject **a, PyObject *const *head, PyObject *body)
{
    static const int at[VARIANT_HEAD] = {RA_FRAME, RA_TIME, RA_SRC, RA_SPORT, RA_DST, RA_DPORT, RA_TRANSPORT,
                                         RA_DIRECTION, RA_DIALECT, RA_OFFSET, RA_WIRE};
    int i;
    for (i = 0; i < VARIANT_HEAD; i++)
        a[at[i]] = head[i];
    a[RA_KIND] = variant_kind;
    a[RA_RAW] = body;
    a[RA_APP] = Py_None;
}

/* TextWriter.variant_summary(table, type_names, max_depth, chars, arrows, body, frame, time, src, sport,
 * dst, dport, transport, direction, dialect, offset, wire) -> the summary_line of the record
 * PcapReader._variant makes of a message body whose Table decodes it (Variant kind, no message),
 * written without the record: the value is decoded by `table` and freed here, its type name is
 * type_names[type(value)]. None (nothing decoded, no exception): the reader makes the record. */
static PyObject *TextWriter_variant_summary(TextWriter *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *a[RA_COUNT] = {NULL}, *value = NULL, *type, *s;
    Py_ssize_t chars;
    if (nargs != 6 + VARIANT_HEAD || !PyTuple_CheckExact(args[4]) || PyTuple_GET_SIZE(args[4]) != 3) {
        PyErr_SetString(PyExc_TypeError, "variant_summary(table, type_names, max_depth, chars, arrows, body, "
                                         "frame, time, src, sport, dst, dport, transport, direction, dialect, "
                                         "offset, wire)");
        return NULL;
    }
    if ((chars = summary_chars(args[3])) < 0)
        return NULL;
    if (decode_named(args[0], args[1], args[2], args[5], &value, &type) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    variant_head(a, args + 6, args[5]);
    a[RA_VALUE] = value;
    s = summary_write(self, a, Py_None, type, chars, args[4]);
    Py_DECREF(value);
    if (s == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return s;
}

static int parse_esc(Esc *esc, PyObject *map)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    memset(esc, 0, 128 * sizeof(Esc));
    if (!PyDict_Check(map)) {
        PyErr_SetString(PyExc_TypeError, "escape table must be a dict {code point: str}");
        return -1;
    }
    while (PyDict_Next(map, &pos, &k, &v)) {
        long c = PyLong_Check(k) ? PyLong_AsLong(k) : -1;
        const char *p;
        Py_ssize_t n;
        if (c >= 0xD800 && c <= 0xDFFF)
            continue; /* the surrogate escapes: put_escaped writes them itself */
        if (c < 0 || c > 127 || !PyUnicode_Check(v) || !PyUnicode_IS_ASCII(v)
            || (p = PyUnicode_AsUTF8AndSize(v, &n)) == NULL || n < 1 || n > ESC_MAX) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "escapes: ASCII characters to short ASCII text");
            return -1;
        }
        esc[c].n = (unsigned char)n;
        memcpy(esc[c].s, p, (size_t)n);
    }
    return 0;
}

/* entry tuple: (kind, rank, keyable, name, plan, is_int, single) */
static int parse_text_entry(TEntry *e, PyObject *t)
{
    PyObject *name, *plan;
    if (!PyArg_ParseTuple(t, "iipOOpp", &e->kind, &e->rank, &e->keyable, &name, &plan, &e->is_int, &e->single))
        return -1;
    if (e->kind < 0 || e->kind >= TK_COUNT) {
        PyErr_SetString(PyExc_ValueError, "unknown text kind");
        return -1;
    }
    if (name != Py_None && str_set(&e->name, name) < 0)
        return -1;
    if ((e->kind == TK_STRUCT || e->kind == TK_PACKED || e->kind == TK_PACKED_BYTES || e->kind == TK_PACKED_STRINGS
         || e->kind == TK_RID || e->kind == TK_CONST) && e->name.s == NULL) {
        PyErr_SetString(PyExc_ValueError, "this text kind needs a name");
        return -1;
    }
    if (e->kind == TK_STRUCT) {
        if (plan_leaves(plan, &e->n) < 0)
            return -1;
        Py_INCREF(plan);
        e->plan = plan;
    }
    return 0;
}

static void TextWriter_dealloc(TextWriter *self)
{
    Py_ssize_t i;
    for (i = 0; self->entries != NULL && i < self->nentries; i++) {
        str_free(&self->entries[i].name);
        Py_XDECREF(self->entries[i].plan);
    }
    PyMem_Free(self->entries);
    for (i = 0; i < ST_COUNT; i++)
        str_free(&self->style[i]);
    PyMem_Free(self->powers);
    if (self->jtwin != NULL)
        json_twin_free((TextWriter *)self->jtwin);
    Py_XDECREF(self->index);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* TextWriter(entries, family4, float_single, max_depth, style, esc_string, esc_name, esc_path,
 *            powers) - see fast.text_writer */
static PyObject *TextWriter_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"entries", "family4", "float_single", "max_depth", "style", "esc_string",
                             "esc_name", "esc_path", "powers", NULL};
    PyObject *entries, *style, *esc_string, *esc_name, *esc_path, *powers, *list = NULL;
    int g4, float_single, max_depth;
    Py_ssize_t i;
    TextWriter *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OppiO!OOOO!", kwlist, &entries, &g4, &float_single, &max_depth,
                                     &PyTuple_Type, &style, &esc_string, &esc_name, &esc_path, &PyTuple_Type,
                                     &powers))
        return NULL;
    if ((self = (TextWriter *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    self->g4 = g4;
    self->float_single = float_single;
    self->max_depth = max_depth;
    if ((list = index_entries(entries, &self->index)) == NULL)
        goto fail;
    self->nentries = PyList_GET_SIZE(list);
    if ((self->entries = PyMem_Calloc((size_t)self->nentries + 1, sizeof(TEntry))) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (i = 0; i < self->nentries; i++)
        if (parse_text_entry(&self->entries[i], PyList_GET_ITEM(list, i)) < 0)
            goto fail;
    if (PyTuple_GET_SIZE(style) != ST_COUNT) {
        PyErr_SetString(PyExc_ValueError, "style has the wrong number of strings");
        goto fail;
    }
    for (i = 0; i < ST_COUNT; i++)
        if (str_set(&self->style[i], PyTuple_GET_ITEM(style, i)) < 0)
            goto fail;
    if (parse_esc(self->esc_string, esc_string) < 0 || parse_esc(self->esc_name, esc_name) < 0
        || parse_esc(self->esc_path, esc_path) < 0)
        goto fail;
    self->npowers = (int)PyTuple_GET_SIZE(powers);
    if ((self->powers = PyMem_Calloc((size_t)self->npowers + 1, sizeof(Power))) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (i = 0; i < self->npowers; i++) {
        unsigned long long f;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(powers, i), "Kii", &f, &self->powers[i].e, &self->powers[i].k))
            goto fail;
        self->powers[i].f = f;
    }
    Py_DECREF(list);
    return (PyObject *)self;
fail:
    Py_XDECREF(list);
    Py_DECREF(self);
    return NULL;
}

static PyMethodDef TextWriter_methods[] = {
    {"render", (PyCFunction)TextWriter_render, METH_O,
     "render(value) -> the text notation, or None to let text/writer.py do it"},
    {"summary_line", (PyCFunction)(void (*)(void))TextWriter_summary_line, METH_FASTCALL,
     "summary_line(rec, type, chars, arrows) -> read's text line of a Variant record, or None to let Python write it"},
    {"variant_summary", (PyCFunction)(void (*)(void))TextWriter_variant_summary, METH_FASTCALL,
     "variant_summary(table, type_names, max_depth, chars, arrows, body, frame, time, src, sport, dst, dport, "
     "transport, direction, dialect, offset, wire) -> summary_line of a message body's Variant record, or None"},
    {"render_start", (PyCFunction)(void (*)(void))TextWriter_render_start, METH_FASTCALL,
     "render_start(value, nbytes) -> (text or its start, complete), or None to let text/writer.py do it"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TextWriterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_dissect.codec._speedups.TextWriter",
    .tp_doc = "One dialect's var2str / var_to_str writer, built by godot_dissect.codec.fast.",
    .tp_basicsize = sizeof(TextWriter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = TextWriter_new,
    .tp_dealloc = (destructor)TextWriter_dealloc,
    .tp_methods = TextWriter_methods,
};

/* =============================================================================================
 * JSON form (jsonform.dumps: json.dumps(to_json(v), ensure_ascii=False))
 * =========================================================================================== */
enum {
    JK_WIDE_INT, JK_FLOAT_BITS, JK_STRING_NAME, JK_MATH, JK_PACKED, JK_BYTES, JK_STRINGS, JK_ID, JK_CONST,
    JK_COUNT
};

static const char *const JSON_KIND_NAMES[JK_COUNT] = {
    "wide_int", "float_bits", "string_name", "math", "packed", "bytes", "strings", "id", "const",
};

typedef struct {
    int kind;
    Str name;     /* the "type" name; JK_CONST: the whole JSON text */
    Py_ssize_t n; /* JK_FLOAT_BITS: bits; JK_PACKED: components per element */
} JEntry;

typedef struct {
    PyObject_HEAD
    int max_depth; /* most JSON levels a value's form may nest (jsonform.VALUE_MAX_DEPTH) */
    JEntry *entries;
    Py_ssize_t nentries;
    PyObject *index;
    Slot cache[TYPE_CACHE];
} JsonWriter;

/* json's string escaping with ensure_ascii=False: " \ and the C0 controls; lone surrogates as
 * \udXXX (jsonform.escape_surrogates). */
static int json_utf8(Buf *b, const unsigned char *p, Py_ssize_t n, int surrogates);

static unsigned char json_byte_class[256];
static inline char *json_escape(char *o, unsigned char c);
#define JSON_SHORT 64 /* a str up to this long (keys, names) is escaped byte by byte without json_utf8's set-up */

static int json_str(Buf *b, PyObject *s)
{
    Py_ssize_t n;
    int ascii, rc;
    const unsigned char *p;
    PyObject *tmp;
    if (PyUnicode_CheckExact(s) && PyUnicode_IS_COMPACT_ASCII(s) && (n = PyUnicode_GET_LENGTH(s)) <= JSON_SHORT) {
        /* what json_utf8 writes of it (an ASCII str holds no surrogate) */
        Py_ssize_t i;
        char *o;
        if (RESERVE(b, n * 6 + 2) < 0)
            return -1;
        p = PyUnicode_DATA(s);
        o = b->p + b->len;
        *o++ = '"';
        for (i = 0; i < n; i++)
            o = json_byte_class[p[i]] ? json_escape(o, p[i]) : (*o++ = (char)p[i], o);
        *o++ = '"';
        b->len = o - b->p;
        return 0;
    }
    if ((p = (const unsigned char *)utf8_any(s, &n, &ascii, &tmp)) == NULL)
        return -1;
    if (!ascii)
        b->ascii = 0;
    rc = json_utf8(b, p, n, tmp != NULL);
    Py_XDECREF(tmp);
    return rc;
}

/* What json_utf8 does with each byte: 0 copies it, 1 escapes it (controls, quote, backslash),
 * 2 looks for a lone surrogate (0xED leads one). One lookup per byte instead of a chain of tests. */
static unsigned char json_byte_class[256];

static void json_byte_classes(void)
{
    int c;
    for (c = 0; c < 0x20; c++)
        json_byte_class[c] = 1;
    json_byte_class['"'] = json_byte_class['\\'] = 1;
    json_byte_class[0xED] = 2;
}

#define JSON_CHUNK 512 /* input bytes escaped per reservation: a record's line stays in its Buf's local bytes */

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JSON_SWAR 1
/* The high bit of each byte of w (8 bytes, little-endian) that json_byte_class does not copy as it is
 * (below 0x20, '"', '\\', 0xED), and maybe of bytes above such a byte (a borrow): the lowest set
 * bit is exact, and the result is 0 exactly when no byte needs anything. */
static inline uint64_t json_attention(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t q = w ^ (ones * '"'), s = w ^ (ones * '\\'), e = w ^ (ones * 0xED);
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((s - ones) & ~s) | ((e - ones) & ~e)) & high;
}
#else
#define JSON_SWAR 0
#endif

/* JSON's escape of c, a character json_byte_class marks 1 (controls, quote, backslash), at o; returns its end */
static inline char *json_escape(char *o, unsigned char c)
{
    *o++ = '\\';
    switch (c) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '\n': *o++ = 'n'; break;
    case '\r': *o++ = 'r'; break;
    case '\t': *o++ = 't'; break;
    case '\b': *o++ = 'b'; break;
    case '\f': *o++ = 'f'; break;
    default:
        memcpy(o, "u00", 3);
        o[3] = HEX[c >> 4];
        o[4] = HEX[c & 15];
        o += 5;
    }
    return o;
}

/* The JSON string of UTF-8 text p[0:n] (`surrogates`: it may hold lone surrogates, surrogatepass'ed). */
static int json_utf8(Buf *b, const unsigned char *p, Py_ssize_t n, int surrogates)
{
    Py_ssize_t i = 0;
    if (put_ch(b, '"') < 0)
        return -1;
    while (i < n) { /* room for the worst case, a chunk at a time (a surrogate may end past it) */
        Py_ssize_t end = n - i < JSON_CHUNK ? n : i + JSON_CHUNK;
        char *o;
        if (RESERVE(b, (end - i) * 6 + SURROGATE_ESC) < 0)
            return -1;
        o = b->p + b->len;
        for (; i < end; i++) {
            unsigned char c, k;
#if JSON_SWAR
            while (end - i >= 8) { /* 8 bytes that need nothing are copied at once */
                uint64_t w, m;
                memcpy(&w, p + i, 8);
                memcpy(o, p + i, 8); /* (the reservation has room: at least 48 bytes are left) */
                if ((m = json_attention(w)) != 0) {
                    int n = __builtin_ctzll(m) >> 3; /* the first byte that needs something */
                    o += n;
                    i += n;
                    break;
                }
                o += 8;
                i += 8;
            }
            if (i >= end)
                break;
#endif
            c = p[i];
            k = json_byte_class[c];
            if (k == 0) {
                *o++ = (char)c;
                continue;
            }
            if (k == 2) {
                if (surrogates && is_surrogate(p, i)) {
                    o = put_surrogate(o, p + i);
                    i += 2;
                } else {
                    *o++ = (char)c;
                }
                continue;
            }
            o = json_escape(o, c);
        }
        b->len = o - b->p;
    }
    return put_ch(b, '"');
}

/* A copy of Str p[0:n] JSON-escaped as json_utf8 escapes it (ASCII only; -1: not ASCII, or no memory) */
static int json_escaped_str(Str *dst, const char *p, Py_ssize_t n)
{
    Py_ssize_t i;
    char *o;
    dst->s = NULL;
    dst->n = 0;
    if ((o = dst->s = PyMem_Malloc((size_t)n * 6 + 1)) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x80) {
            str_free(dst);
            return -1;
        }
        o = json_byte_class[c] == 1 ? json_escape(o, c) : (*o++ = (char)c, o);
    }
    *o = 0;
    dst->n = o - dst->s;
    return 0;
}

/* An escape table whose entries are those of `esc` (or the character itself) JSON-escaped; -1: one
 * does not fit ESC_MAX */
static int json_escaped_table(Esc *dst, const Esc *esc)
{
    int c;
    for (c = 0; c < 128; c++) {
        char text[ESC_MAX], out[ESC_MAX * 6], *o = out;
        int n = esc[c].n, i;
        if (n)
            memcpy(text, esc[c].s, (size_t)n);
        else
            text[n++] = (char)c;
        for (i = 0; i < n; i++) {
            unsigned char t = (unsigned char)text[i];
            o = json_byte_class[t] == 1 ? json_escape(o, t) : (*o++ = (char)t, o);
        }
        if (o - out > ESC_MAX)
            return -1;
        /* a character written as itself stays a 0 entry (put_escaped copies it) */
        dst[c].n = (!esc[c].n && o - out == 1) ? 0 : (unsigned char)(o - out);
        memset(dst[c].s, 0, ESC_MAX);
        memcpy(dst[c].s, out, (size_t)(o - out));
    }
    return 0;
}

static void json_twin_free(TextWriter *t)
{
    int i;
    for (i = 0; i < ST_COUNT; i++)
        str_free(&t->style[i]);
    PyMem_Free(t);
}

/* w's JSON-escaped copy (see TextWriter.jtwin), or NULL when its text cannot be escaped ahead (a name
 * or punctuation that is not ASCII, an escape too long): then the text is escaped after it is written. */
static TextWriter *json_twin(TextWriter *w)
{
    TextWriter *t;
    Py_ssize_t i;
    if (w->jtwin_state)
        return w->jtwin_state > 0 ? (TextWriter *)w->jtwin : NULL;
    w->jtwin_state = -1;
    for (i = 0; i < w->nentries; i++) { /* names are written as they are: they must need no escape */
        const Str *name = &w->entries[i].name;
        Py_ssize_t j;
        for (j = 0; j < name->n; j++)
            if ((unsigned char)name->s[j] >= 0x80 || json_byte_class[(unsigned char)name->s[j]])
                return NULL;
    }
    if ((t = PyMem_Malloc(sizeof(TextWriter))) == NULL)
        return NULL;
    memcpy(t, w, sizeof(TextWriter)); /* entries, index, powers: w's, borrowed (w owns its twin) */
    t->jtwin = NULL;
    t->jtwin_state = -1;
    t->jesc = 1;
    for (i = 0; i < ST_COUNT; i++)
        t->style[i].s = NULL;
    for (i = 0; i < ST_COUNT; i++)
        if (json_escaped_str(&t->style[i], w->style[i].s, w->style[i].n) < 0) {
            json_twin_free(t);
            return NULL;
        }
    if (json_escaped_table(t->esc_string, w->esc_string) < 0 || json_escaped_table(t->esc_name, w->esc_name) < 0
        || json_escaped_table(t->esc_path, w->esc_path) < 0) {
        json_twin_free(t);
        return NULL;
    }
    w->jtwin = t;
    w->jtwin_state = 1;
    return t;
}

/* jsonform._num: finite floats as repr, the others as the strings "nan", "inf", "-inf" */
static int json_num(Buf *b, double x)
{
    if (isnan(x))
        return PUT_LIT(b, "\"nan\"");
    if (isinf(x))
        return x > 0 ? PUT_LIT(b, "\"inf\"") : PUT_LIT(b, "\"-inf\"");
    return put_repr(b, x);
}

static int json_head(Buf *b, const Str *name)
{
    return (PUT_LIT(b, "{\"type\": \"") < 0 || PUT_STR(b, *name) < 0) ? -1 : PUT_LIT(b, "\", ");
}

/* jsonform._flat: components depth-first (floats through _num, ints as they are) */
static int json_flat(Buf *b, PyObject *v, int *first, int depth)
{
    Py_ssize_t i;
    if (depth > 8)
        return -1;
    for (i = 0; i < PyTuple_GET_SIZE(v); i++) {
        PyObject *c = PyTuple_GET_ITEM(v, i);
        if (PyTuple_Check(c)) {
            if (json_flat(b, c, first, depth + 1) < 0)
                return -1;
            continue;
        }
        if (!*first && PUT_LIT(b, ", ") < 0)
            return -1;
        *first = 0;
        if (PyFloat_CheckExact(c)) {
            if (json_num(b, PyFloat_AS_DOUBLE(c)) < 0)
                return -1;
        } else if (!PyLong_CheckExact(c) || put_pyint(b, c) < 0) {
            return -1;
        }
    }
    return 0;
}

static int json_packed(Buf *b, PyObject *v, const JEntry *e)
{
    Py_buffer view;
    PyObject *arr;
    Py_ssize_t i, count;
    char format;
    int rc = -1, real;
    if (packed_buffer(v, str_array, &view, &format, &arr) < 0)
        return -1;
    real = format == 'f' || format == 'd';
    count = view.len / view.itemsize;
    if ((e->n > 1 && (!real || count % e->n)) || json_head(b, &e->name) < 0 || PUT_LIT(b, "\"value\": [") < 0)
        goto done; /* elements of ints, or a partial element: Python's */
    for (i = 0; i < count; i++) {
        const char *p = (const char *)view.buf + i * view.itemsize;
        if (i && PUT_LIT(b, ", ") < 0)
            goto done;
        if (e->n > 1 && i % e->n == 0 && put_ch(b, '[') < 0)
            goto done;
        if (real ? json_num(b, packed_real(p, format)) < 0 : put_ll(b, packed_int(p, format)) < 0)
            goto done;
        if (e->n > 1 && i % e->n == e->n - 1 && put_ch(b, ']') < 0)
            goto done;
    }
    rc = PUT_LIT(b, "]}");
done:
    PyBuffer_Release(&view);
    Py_DECREF(arr);
    return rc;
}

static int json_value(JsonWriter *w, Buf *b, PyObject *v, int depth)
{
    PyTypeObject *tp = Py_TYPE(v);
    const JEntry *e;
    Py_ssize_t i;
    if (depth + JSON_LEAF_LEVELS > w->max_depth) /* depth: JSON levels around v */
        return -1;
    if (tp == &PyUnicode_Type)
        return json_str(b, v);
    if (tp == &PyLong_Type)
        return put_pyint(b, v);
    if (tp == &PyFloat_Type) {
        double x = PyFloat_AS_DOUBLE(v);
        if (isfinite(x))
            return put_repr(b, x);
        return (PUT_LIT(b, "{\"type\": \"float\", \"value\": ") < 0 || json_num(b, x) < 0) ? -1 : put_ch(b, '}');
    }
    if (tp == &PyBool_Type)
        return v == Py_True ? PUT_LIT(b, "true") : PUT_LIT(b, "false");
    if (v == Py_None)
        return PUT_LIT(b, "null");
    if (tp == &PyList_Type || tp == &PyTuple_Type) {
        if (put_ch(b, '[') < 0)
            return -1;
        for (i = 0; i < Py_SIZE(v); i++) {
            PyObject *x = tp == &PyList_Type ? PyList_GET_ITEM(v, i) : PyTuple_GET_ITEM(v, i);
            if ((i && PUT_LIT(b, ", ") < 0) || json_value(w, b, x, depth + 1) < 0)
                return -1;
        }
        return put_ch(b, ']');
    }
    if (tp == &PyDict_Type) {
        PyObject *k, *x;
        Py_ssize_t pos = 0;
        if (PUT_LIT(b, "{\"type\": \"Dictionary\", \"items\": [") < 0)
            return -1;
        for (i = 0; PyDict_Next(v, &pos, &k, &x); i++) {
            if ((i && PUT_LIT(b, ", ") < 0) || put_ch(b, '[') < 0 || json_value(w, b, k, depth + 3) < 0
                || PUT_LIT(b, ", ") < 0 || json_value(w, b, x, depth + 3) < 0 || put_ch(b, ']') < 0)
                return -1;
        }
        return PUT_LIT(b, "]}");
    }
    e = lookup(w->cache, w->index, (const char *)w->entries, sizeof(JEntry), tp);
    if (e == NULL)
        return -1;
    switch (e->kind) {
    case JK_WIDE_INT:
        return (PUT_LIT(b, "{\"type\": \"int\", \"value\": ") < 0 || put_pyint(b, v) < 0)
            ? -1 : PUT_LIT(b, ", \"wide\": true}");
    case JK_FLOAT_BITS:
        if (PUT_LIT(b, "{\"type\": \"float\", \"value\": ") < 0 || json_num(b, PyFloat_AS_DOUBLE(v)) < 0
            || PUT_LIT(b, ", \"bits\": ") < 0 || put_ll(b, e->n) < 0)
            return -1;
        return put_ch(b, '}');
    case JK_STRING_NAME:
        return (PUT_LIT(b, "{\"type\": \"StringName\", \"value\": ") < 0 || json_str(b, v) < 0) ? -1 : put_ch(b, '}');
    case JK_MATH: {
        int first = 1;
        if (json_head(b, &e->name) < 0 || PUT_LIT(b, "\"value\": [") < 0 || json_flat(b, v, &first, 0) < 0)
            return -1;
        return PUT_LIT(b, "]}");
    }
    case JK_PACKED:
        return json_packed(b, v, e);
    case JK_BYTES: {
        const unsigned char *p = (const unsigned char *)(PyBytes_Check(v) ? PyBytes_AS_STRING(v) : PyByteArray_AS_STRING(v));
        Py_ssize_t n = PyBytes_Check(v) ? PyBytes_GET_SIZE(v) : PyByteArray_GET_SIZE(v);
        if (PUT_LIT(b, "{\"type\": \"PackedByteArray\", \"hex\": \"") < 0 || n > PY_SSIZE_T_MAX / 4 || RESERVE(b, 2 * n) < 0)
            return -1;
        for (i = 0; i < n; i++) {
            b->p[b->len++] = HEX[p[i] >> 4];
            b->p[b->len++] = HEX[p[i] & 15];
        }
        return PUT_LIT(b, "\"}");
    }
    case JK_STRINGS:
        if (PUT_LIT(b, "{\"type\": \"PackedStringArray\", \"value\": [") < 0)
            return -1;
        for (i = 0; i < PyTuple_GET_SIZE(v); i++) {
            PyObject *s = PyTuple_GET_ITEM(v, i);
            if ((i && PUT_LIT(b, ", ") < 0) || !PyUnicode_CheckExact(s) || json_str(b, s) < 0)
                return -1;
        }
        return PUT_LIT(b, "]}");
    case JK_ID: {
        PyObject *id = id_field(v, 1); /* json writes a bool id as true */
        if (id == NULL || json_head(b, &e->name) < 0 || PUT_LIT(b, "\"id\": ") < 0 || put_pyint(b, id) < 0)
            return -1;
        return put_ch(b, '}');
    }
    case JK_CONST:
        return PUT_STR(b, e->name);
    }
    return -1;
}

static PyObject *JsonWriter_render(JsonWriter *self, PyObject *value)
{
    Buf b;
    buf_init(&b);
    return rendered_or_none(&b, json_value(self, &b, value, 0));
}

#define PLAIN_MAX_DEPTH 32 /* most levels of plain JSON data in a record's head (packet fields: a few) */

/* Plain JSON data as json.dumps writes it (record fields): str, int, finite float, bool, None, and
 * lists, tuples and str-keyed dicts of them (packet metadata, already in its JSON form). */
static int json_plain_at(Buf *b, PyObject *v, int depth)
{
    PyTypeObject *tp = Py_TYPE(v);
    Py_ssize_t i, pos = 0;
    PyObject *k, *x;
    if (tp == &PyUnicode_Type)
        return json_str(b, v);
    if (tp == &PyLong_Type)
        return put_pyint(b, v);
    if (tp == &PyFloat_Type)
        return isfinite(PyFloat_AS_DOUBLE(v)) ? put_repr(b, PyFloat_AS_DOUBLE(v)) : -1;
    if (tp == &PyBool_Type)
        return v == Py_True ? PUT_LIT(b, "true") : PUT_LIT(b, "false");
    if (v == Py_None)
        return PUT_LIT(b, "null");
    if (depth >= PLAIN_MAX_DEPTH)
        return -1;
    if (tp == &PyList_Type || tp == &PyTuple_Type) {
        if (put_ch(b, '[') < 0)
            return -1;
        for (i = 0; i < PySequence_Fast_GET_SIZE(v); i++) /* a list may change under a call: re-read its size */
            if ((i && PUT_LIT(b, ", ") < 0) || json_plain_at(b, PySequence_Fast_GET_ITEM(v, i), depth + 1) < 0)
                return -1;
        return put_ch(b, ']');
    }
    if (tp == &PyDict_Type) {
        if (put_ch(b, '{') < 0)
            return -1;
        for (i = 0; PyDict_Next(v, &pos, &k, &x); i++)
            if ((i && PUT_LIT(b, ", ") < 0) || !PyUnicode_CheckExact(k) || json_str(b, k) < 0
                || PUT_LIT(b, ": ") < 0 || json_plain_at(b, x, depth + 1) < 0)
                return -1;
        return put_ch(b, '}');
    }
    return -1;
}

static int json_plain(Buf *b, PyObject *v)
{
    return json_plain_at(b, v, 0);
}

/* JsonWriter.line(head, text, value) -> json.dumps({**head, "text": text, "value": to_json(value)},
 * ensure_ascii=False), or of head alone when text is None; None when a head field is not a plain
 * scalar or the value is one Python writes. */
static PyObject *JsonWriter_line(JsonWriter *self, PyObject *const *args, Py_ssize_t nargs)
{
    Buf b;
    PyObject *head, *text, *k, *v, *s = NULL;
    Py_ssize_t pos = 0;
    int first = 1;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "line(head, text, value)");
        return NULL;
    }
    head = args[0];
    text = args[1];
    if (!PyDict_CheckExact(head) || (text != Py_None && !PyUnicode_CheckExact(text)))
        Py_RETURN_NONE;
    buf_init(&b);
    if (put_ch(&b, '{') < 0)
        goto done;
    while (PyDict_Next(head, &pos, &k, &v)) {
        if ((!first && PUT_LIT(&b, ", ") < 0) || !PyUnicode_CheckExact(k) || json_str(&b, k) < 0
            || PUT_LIT(&b, ": ") < 0 || json_plain(&b, v) < 0)
            goto done;
        first = 0;
    }
    if (text != Py_None) {
        if ((!first && PUT_LIT(&b, ", ") < 0) || PUT_LIT(&b, "\"text\": ") < 0 || json_str(&b, text) < 0
            || PUT_LIT(&b, ", \"value\": ") < 0 || json_value(self, &b, args[2], 0) < 0)
            goto done;
    }
    if (put_ch(&b, '}') == 0)
        s = buf_str(&b);
done:
    buf_free(&b);
    if (s == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return s;
}

/* round(x, ndigits) as Python computes it (the exact binary value of x rounded half-even to ndigits
 * decimals, then the double nearest that decimal) without a decimal conversion, for |x| * 10**ndigits
 * below 2**52: x * 10**ndigits is exactly hi + lo (fma), |lo| <= ulp(hi) / 2 and 0.5 is a multiple of
 * ulp(hi), so hi's fraction alone says which side of a half the product is, lo only breaks a tie;
 * n / 10**ndigits of the integer n is then correctly rounded, as the decimal's nearest double is.
 * 0: not in that range (the caller converts). */
static const double POW10[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
                                 1e15};

/* round_exact's integer: |x| * 10**ndigits rounded half-even on its exact value (an integer below
 * 2**52, as a double); 0: not in that range. */
static int round_scaled(double x, int ndigits, double *n)
{
    double ax = fabs(x), scale, hi, lo, f, g;
    if (ndigits < 0 || ndigits > 15 || !isfinite(x))
        return 0;
    scale = POW10[ndigits];
    hi = ax * scale;
    if (!(hi < 4503599627370496.0)) /* 2**52 */
        return 0;
    lo = fma(ax, scale, -hi);
    f = floor(hi);
    g = hi - f;
    *n = (g > 0.5 || (g == 0.5 && (lo > 0 || (lo == 0 && fmod(f, 2.0) != 0)))) ? f + 1 : f;
    return 1;
}

static int round_exact(double x, int ndigits, double *out)
{
    double n;
    if (!round_scaled(x, ndigits, &n))
        return 0;
    *out = copysign(n / POW10[ndigits], x);
    return 1;
}

/* f"{x:.6f}" as Python writes it (the exact binary value rounded half-even to 6 decimals, as
 * _Py_dg_dtoa's mode 3 does) for 0 <= x (not -0.0) with x * 10**6 below 2**52 (capture times): the rounded
 * integer's digits with the point put in, no decimal conversion; anything else through
 * PyOS_double_to_string. */
static int put_fixed6(Buf *b, double x)
{
    double n;
    char *num;
    int rc;
    if (!signbit(x) && round_scaled(x, 6, &n)) {
        char d[32];
        unsigned long long v = (unsigned long long)n;
        int k = snprintf(d, sizeof d, "%llu.%06llu", v / 1000000ULL, v % 1000000ULL);
        return k > 0 && k < (int)sizeof d ? put(b, d, k) : -1;
    }
    if ((num = PyOS_double_to_string(x, 'f', 6, 0, NULL)) == NULL)
        return -1;
    rc = put(b, num, (Py_ssize_t)strlen(num));
    PyMem_Free(num);
    return rc;
}

/* round(x, ndigits) of a float as Python computes it (correctly rounded to ndigits decimals, then
 * the nearest double), then json.dumps's text of it; an int as it is (round leaves ints alone). */
static int put_rounded(Buf *b, PyObject *v, int ndigits)
{
    double x, r;
    char *s;
    if (PyLong_CheckExact(v))
        return put_pyint(b, v);
    if (!PyFloat_CheckExact(v) || !isfinite(x = PyFloat_AS_DOUBLE(v)))
        return -1;
    if (round_exact(x, ndigits, &r))
        return put_repr(b, r);
    if ((s = PyOS_double_to_string(x, 'f', ndigits, 0, NULL)) == NULL)
        return -1;
    r = PyOS_string_to_double(s, NULL, NULL);
    PyMem_Free(s);
    if (r == -1.0 && PyErr_Occurred())
        return -1;
    return put_repr(b, r);
}


/* Where a class with __slots__ keeps an attribute: the offset of its member (T_OBJECT_EX), or -1
 * (a property, a __dict__ attribute, anything else: read with getattr).  The member must be one of
 * tp's own layout (tp or a base declared it): a class attribute set to another class's slot would
 * otherwise be read at an offset past this object's end (Python's getattr refuses it: TypeError). */
static Py_ssize_t slot_offset(PyTypeObject *tp, PyObject *name)
{
    PyObject *d = _PyType_Lookup(tp, name); /* borrowed */
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type) || !PyType_IsSubtype(tp, PyDescr_TYPE(d)))
        return -1;
    if (((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX
        || (((PyMemberDescrObject *)d)->d_member->flags & READ_RESTRICTED))
        return -1;
    return ((PyMemberDescrObject *)d)->d_member->offset;
}

/* The record class last seen and its attributes' slot offsets (records are of one class). */
static PyTypeObject *record_type;
static Py_ssize_t record_offset[RA_COUNT];

#define OPTIONAL_MAX 32 /* optional head attributes whose slots are remembered */
static PyObject *optional_names; /* the tuple of names last seen (kept), for record_type */
static Py_ssize_t optional_offset[OPTIONAL_MAX];

/* rec.<optional[i]> (a new reference), as record_get does it. */
static PyObject *record_optional(PyObject *rec, PyObject *optional, Py_ssize_t i)
{
    PyObject *v, *name = PyTuple_GET_ITEM(optional, i);
    Py_ssize_t k, n = PyTuple_GET_SIZE(optional);
    if (Py_TYPE(rec) != record_type || n > OPTIONAL_MAX)
        return PyObject_GetAttr(rec, name);
    if (optional != optional_names) {
        Py_INCREF(optional);
        Py_XSETREF(optional_names, optional);
        for (k = 0; k < n; k++)
            optional_offset[k] = PyUnicode_CheckExact(PyTuple_GET_ITEM(optional, k))
                ? slot_offset(record_type, PyTuple_GET_ITEM(optional, k)) : -1;
    }
    if (optional_offset[i] < 0 || (v = *(PyObject **)((char *)rec + optional_offset[i])) == NULL)
        return PyObject_GetAttr(rec, name);
    Py_INCREF(v);
    return v;
}

/* rec.<attribute i> (a new reference), from its slot when the class has one, else getattr. */
static PyObject *record_get(PyObject *rec, int i)
{
    PyObject *v;
    if (Py_TYPE(rec) != record_type) {
        int k;
        Py_INCREF(Py_TYPE(rec));
        Py_XSETREF(record_type, Py_TYPE(rec)); /* kept: the offsets go with it */
        Py_CLEAR(optional_names);
        for (k = 0; k < RA_COUNT; k++)
            record_offset[k] = slot_offset(record_type, record_attr[k]);
    }
    if (record_offset[i] < 0)
        return PyObject_GetAttr(rec, record_attr[i]);
    v = *(PyObject **)((char *)rec + record_offset[i]);
    if (v == NULL)
        return PyObject_GetAttr(rec, record_attr[i]); /* unset: getattr raises what Python raises */
    Py_INCREF(v);
    return v;
}

static int put_key(Buf *b, const char *key, int first)
{
    if (!first && PUT_LIT(b, ", ") < 0)
        return -1;
    return (put_ch(b, '"') < 0 || put(b, key, (Py_ssize_t)strlen(key)) < 0) ? -1 : PUT_LIT(b, "\": ");
}

/* records.Record.to_jsonl() of a record without error, fields or hex, from its attributes a[RA_...]:
 * the fixed head keys (time rounded to 6 decimals, wire_bytes to 3, length = len(raw), app_bytes
 * None as len(raw)), `type`, then every attribute named in the tuple `optional` that is not None,
 * read off `rec` (optional NULL: none), then text and value (`text` a str, or the TextWriter that
 * writes the value's text here). NULL (maybe with an exception): Python writes that record. */
/* The JSON string of w's text of v, written as it is made by w's JSON-escaped copy (json_twin): 1; 0 when that
 * copy cannot write it (no copy, a value the writer leaves to Python, text that is not ASCII: then the caller
 * writes and escapes the text, which gives each of these cases as it did), b as it was and no error set. */
static int json_text(Buf *b, TextWriter *w, PyObject *v)
{
    TextWriter *t = json_twin(w);
    Py_ssize_t mark = b->len;
    int ascii = b->ascii;
    if (t == NULL)
        return 0;
    b->ascii = 1;
    if (put_ch(b, '"') == 0 && text_value(t, b, v, 0) == 0 && b->ascii && put_ch(b, '"') == 0) {
        b->ascii = ascii;
        return 1;
    }
    PyErr_Clear();
    b->len = mark;
    b->ascii = ascii;
    return 0;
}

static PyObject *record_write(JsonWriter *self, PyObject *const *a, PyObject *type, PyObject *text, PyObject *rec,
                              PyObject *optional)
{
    Buf b;
    PyObject *s = NULL;
    Py_ssize_t i, rawlen;
    int rc = -1;
    if (!PyUnicode_CheckExact(type) || (!PyUnicode_CheckExact(text) && Py_TYPE(text) != &TextWriterType)
        || !PyBytes_CheckExact(a[RA_RAW]))
        return NULL;
    buf_init(&b);
    rawlen = PyBytes_GET_SIZE(a[RA_RAW]);
    if (put_ch(&b, '{') < 0 || put_key(&b, "frame", 1) < 0 || json_plain(&b, a[RA_FRAME]) < 0
        || put_key(&b, "time", 0) < 0 || put_rounded(&b, a[RA_TIME], 6) < 0
        || put_key(&b, "src", 0) < 0 || json_plain(&b, a[RA_SRC]) < 0
        || put_key(&b, "sport", 0) < 0 || json_plain(&b, a[RA_SPORT]) < 0
        || put_key(&b, "dst", 0) < 0 || json_plain(&b, a[RA_DST]) < 0
        || put_key(&b, "dport", 0) < 0 || json_plain(&b, a[RA_DPORT]) < 0
        || put_key(&b, "transport", 0) < 0 || json_plain(&b, a[RA_TRANSPORT]) < 0
        || put_key(&b, "direction", 0) < 0 || json_plain(&b, a[RA_DIRECTION]) < 0
        || put_key(&b, "kind", 0) < 0 || json_plain(&b, a[RA_KIND]) < 0
        || put_key(&b, "dialect", 0) < 0 || json_plain(&b, a[RA_DIALECT]) < 0
        || put_key(&b, "type", 0) < 0 || json_str(&b, type) < 0
        || put_key(&b, "offset", 0) < 0 || json_plain(&b, a[RA_OFFSET]) < 0
        || put_key(&b, "length", 0) < 0 || put_ll(&b, rawlen) < 0
        || put_key(&b, "wire_bytes", 0) < 0 || put_rounded(&b, a[RA_WIRE], 3) < 0
        || put_key(&b, "app_bytes", 0) < 0
        || (a[RA_APP] == Py_None ? put_ll(&b, rawlen) : json_plain(&b, a[RA_APP])) < 0)
        goto done;
    for (i = 0; optional != NULL && i < PyTuple_GET_SIZE(optional); i++) {
        PyObject *name = PyTuple_GET_ITEM(optional, i), *v;
        const char *key;
        int bad;
        if (!PyUnicode_CheckExact(name) || (key = PyUnicode_AsUTF8(name)) == NULL
            || (v = record_optional(rec, optional, i)) == NULL)
            goto done;
        bad = v != Py_None && (put_key(&b, key, 0) < 0 || json_plain(&b, v) < 0);
        Py_DECREF(v);
        if (bad)
            goto done;
    }
    if (PUT_LIT(&b, ", \"text\": ") < 0)
        goto done;
    if (PyUnicode_CheckExact(text)) {
        if (json_str(&b, text) < 0)
            goto done;
    } else if (!json_text(&b, (TextWriter *)text, a[RA_VALUE])) {
        /* the value's text written here by that TextWriter, then escaped: no str made for it */
        Buf t;
        int bad;
        buf_init(&t);
        bad = text_value((TextWriter *)text, &t, a[RA_VALUE], 0) < 0;
        if (!bad && t.ascii) {
            bad = json_utf8(&b, (const unsigned char *)t.p, t.len, 0) < 0;
        } else if (!bad) { /* not ASCII: through a str, as json_str writes one (lone surrogates) */
            PyObject *ts = buf_str(&t);
            bad = ts == NULL || json_str(&b, ts) < 0;
            Py_XDECREF(ts);
        }
        buf_free(&t);
        if (bad)
            goto done;
    }
    if (PUT_LIT(&b, ", \"value\": ") < 0 || json_value(self, &b, a[RA_VALUE], 0) < 0 || put_ch(&b, '}') < 0)
        goto done;
    rc = 0;
done:
    if (rc == 0)
        s = buf_str(&b);
    buf_free(&b);
    return s;
}

/* JsonWriter.record(rec, type, text, optional) -> record_write's line of a record, read off its
 * attributes; None: Python writes that record. */
static PyObject *JsonWriter_record(JsonWriter *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *a[RA_COUNT] = {NULL}, *s = NULL;
    Py_ssize_t i;
    if (nargs != 4 || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "record(rec, type, text, optional)");
        return NULL;
    }
    if (!PyUnicode_CheckExact(args[1]) || (!PyUnicode_CheckExact(args[2]) && Py_TYPE(args[2]) != &TextWriterType))
        Py_RETURN_NONE;
    if (record_attrs_ready() < 0)
        return NULL;
    for (i = 0; i < RA_COUNT; i++)
        if ((a[i] = record_get(args[0], (int)i)) == NULL)
            goto done;
    s = record_write(self, a, args[1], args[2], args[0], args[3]);
done:
    for (i = 0; i < RA_COUNT; i++)
        Py_XDECREF(a[i]);
    if (s == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return s;
}

/* JsonWriter.variant_line(table, text_writer, type_names, max_depth, body, frame, time, src, sport, dst,
 * dport, transport, direction, dialect, offset, wire) -> the to_jsonl() line of the record
 * PcapReader._variant makes of a message body whose Table decodes it (kind "variant", no optional
 * key), written without the record: the value is decoded by `table` and freed here, its type name
 * is type_names[type(value)], its text written by `text_writer`. None (nothing decoded, no
 * exception): the reader makes the record. */
static PyObject *JsonWriter_variant_line(JsonWriter *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *a[RA_COUNT] = {NULL}, *value = NULL, *type, *s;
    if (nargs != 5 + VARIANT_HEAD) {
        PyErr_SetString(PyExc_TypeError, "variant_line(table, text_writer, type_names, max_depth, body, frame, "
                                         "time, src, sport, dst, dport, transport, direction, dialect, offset, "
                                         "wire)");
        return NULL;
    }
    if (Py_TYPE(args[1]) != &TextWriterType || decode_named(args[0], args[2], args[3], args[4], &value, &type) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    variant_head(a, args + 5, args[4]);
    a[RA_VALUE] = value;
    s = record_write(self, a, type, args[1], NULL, NULL);
    Py_DECREF(value);
    if (s == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return s;
}

/* Append a rendered text (UTF-8, checked as buf_str checks it) to a bytearray: 0, or -1 with an exception. */
static int buf_append_to(Buf *b, PyObject *sink)
{
    Py_ssize_t at = PyByteArray_GET_SIZE(sink);
    if (!b->ascii) {
        PyObject *s = PyUnicode_DecodeUTF8(b->p, b->len, NULL);
        if (s == NULL)
            return -1;
        Py_DECREF(s);
    }
    if (PyByteArray_Resize(sink, at + b->len) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(sink) + at, b->p, (size_t)b->len);
    return 0;
}

/* JsonWriter.variant_row(sink, table, text_writer, type_names, max_depth, body, frame, time, src, sport,
 * dst, dport, transport, direction, dialect, offset, wire) -> "": the dataset row (dataset/arrow.py) of
 * the record PcapReader._variant makes of a message body, made as variant_line writes its line, with no
 * record: its text and JSON value are appended (UTF-8) to the bytearrays sink[0] and sink[1], and the row
 * (frame, time, src, sport, dst, dport, transport, direction, dialect, offset, wire, len(body), type name,
 * text bytes, JSON value bytes, None) to the list sink[2]; the empty line stands for it where the reader
 * hands lines on. None (nothing decoded or written, the sink as it was, no exception): the reader makes
 * the record. */
#define VARIANT_ROW (VARIANT_HEAD + 5)
static PyObject *JsonWriter_variant_row(JsonWriter *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *value = NULL, *type, *texts, *values, *rows, *row = NULL, *length = NULL, *tn = NULL, *jn = NULL;
    Py_ssize_t i, text_at, value_at;
    Buf bt, bj;
    int rc;
    if (nargs != 6 + VARIANT_HEAD || !PyList_CheckExact(args[0]) || PyList_GET_SIZE(args[0]) != 3
            || !PyByteArray_CheckExact(PyList_GET_ITEM(args[0], 0))
            || !PyByteArray_CheckExact(PyList_GET_ITEM(args[0], 1))
            || !PyList_CheckExact(PyList_GET_ITEM(args[0], 2))) {
        PyErr_SetString(PyExc_TypeError, "variant_row(sink: [bytearray, bytearray, list], table, text_writer, "
                                         "type_names, max_depth, body, frame, time, src, sport, dst, dport, "
                                         "transport, direction, dialect, offset, wire)");
        return NULL;
    }
    texts = PyList_GET_ITEM(args[0], 0);
    values = PyList_GET_ITEM(args[0], 1);
    rows = PyList_GET_ITEM(args[0], 2);
    text_at = PyByteArray_GET_SIZE(texts);
    value_at = PyByteArray_GET_SIZE(values);
    if (Py_TYPE(args[2]) != &TextWriterType || decode_named(args[1], args[3], args[4], args[5], &value, &type) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_INCREF(type); /* held by type_names, which the writers below do not touch; held here all the same */
    buf_init(&bt);
    buf_init(&bj);
    rc = text_value((TextWriter *)args[2], &bt, value, 0) == 0 && json_value(self, &bj, value, 0) == 0
         && buf_append_to(&bt, texts) == 0 && buf_append_to(&bj, values) == 0;
    Py_DECREF(value);
    if (rc && (length = PyLong_FromSsize_t(PyBytes_GET_SIZE(args[5]))) != NULL
            && (tn = PyLong_FromSsize_t(bt.len)) != NULL && (jn = PyLong_FromSsize_t(bj.len)) != NULL)
        row = PyTuple_New(VARIANT_ROW);
    buf_free(&bt);
    buf_free(&bj);
    if (row != NULL) {
        for (i = 0; i < VARIANT_HEAD; i++)
            PyTuple_SET_ITEM(row, i, Py_NewRef(args[6 + i]));
        PyTuple_SET_ITEM(row, VARIANT_HEAD, length);
        PyTuple_SET_ITEM(row, VARIANT_HEAD + 1, type);
        PyTuple_SET_ITEM(row, VARIANT_HEAD + 2, tn);
        PyTuple_SET_ITEM(row, VARIANT_HEAD + 3, jn);
        PyTuple_SET_ITEM(row, VARIANT_HEAD + 4, Py_NewRef(Py_None));
        rc = PyList_Append(rows, row);
        Py_DECREF(row);
        if (rc == 0)
            return PyUnicode_FromStringAndSize("", 0);
        length = tn = jn = type = NULL; /* the row held them */
    }
    Py_XDECREF(type);
    Py_XDECREF(length);
    Py_XDECREF(tn);
    Py_XDECREF(jn);
    PyErr_Clear();
    /* the sink as it was (shrinking a bytearray cannot fail) */
    if (PyByteArray_GET_SIZE(texts) > text_at)
        PyByteArray_Resize(texts, text_at);
    if (PyByteArray_GET_SIZE(values) > value_at)
        PyByteArray_Resize(values, value_at);
    Py_RETURN_NONE;
}

static void JsonWriter_dealloc(JsonWriter *self)
{
    Py_ssize_t i;
    for (i = 0; self->entries != NULL && i < self->nentries; i++)
        str_free(&self->entries[i].name);
    PyMem_Free(self->entries);
    Py_XDECREF(self->index);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* JsonWriter(entries: {class: (kind, name, n)}, max_depth=RENDER_MAX_DEPTH) - see fast.json_writer */
static PyObject *JsonWriter_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"entries", "max_depth", NULL};
    PyObject *entries, *list;
    Py_ssize_t i;
    int max_depth = RENDER_MAX_DEPTH;
    JsonWriter *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|i", kwlist, &entries, &max_depth))
        return NULL;
    if ((self = (JsonWriter *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    self->max_depth = max_depth < RENDER_MAX_DEPTH ? max_depth : RENDER_MAX_DEPTH;
    if ((list = index_entries(entries, &self->index)) == NULL)
        goto fail;
    self->nentries = PyList_GET_SIZE(list);
    if ((self->entries = PyMem_Calloc((size_t)self->nentries + 1, sizeof(JEntry))) == NULL) {
        PyErr_NoMemory();
        goto fail_list;
    }
    for (i = 0; i < self->nentries; i++) {
        JEntry *e = &self->entries[i];
        PyObject *name;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "iOn", &e->kind, &name, &e->n))
            goto fail_list;
        if (e->kind < 0 || e->kind >= JK_COUNT || (e->kind == JK_PACKED && (e->n < 1 || e->n > MAX_LEAVES))) {
            PyErr_SetString(PyExc_ValueError, "bad JSON writer entry");
            goto fail_list;
        }
        if (name != Py_None && str_set(&e->name, name) < 0)
            goto fail_list;
        if (e->name.s == NULL && (e->kind == JK_MATH || e->kind == JK_PACKED || e->kind == JK_ID || e->kind == JK_CONST)) {
            PyErr_SetString(PyExc_ValueError, "this JSON kind needs a name");
            goto fail_list;
        }
    }
    Py_DECREF(list);
    return (PyObject *)self;
fail_list:
    Py_DECREF(list);
fail:
    Py_DECREF(self);
    return NULL;
}

static PyMethodDef JsonWriter_methods[] = {
    {"render", (PyCFunction)JsonWriter_render, METH_O,
     "render(value) -> the JSON form as JSON text, or None to let jsonform.py do it"},
    {"line", (PyCFunction)(void (*)(void))JsonWriter_line, METH_FASTCALL,
     "line(head, text, value) -> one JSON line of a record, or None to let jsonform.py do it"},
    {"record", (PyCFunction)(void (*)(void))JsonWriter_record, METH_FASTCALL,
     "record(rec, type, text, optional) -> Record.to_jsonl() of a plain record, or None to let records.py do it"},
    {"variant_line", (PyCFunction)(void (*)(void))JsonWriter_variant_line, METH_FASTCALL,
     "variant_line(table, text_writer, type_names, max_depth, body, frame, time, src, sport, dst, dport, "
     "transport, direction, dialect, offset, wire) -> to_jsonl() of a message body's Variant record, or None"},
    {"variant_row", (PyCFunction)(void (*)(void))JsonWriter_variant_row, METH_FASTCALL,
     "variant_row(sink, table, text_writer, type_names, max_depth, body, frame, time, src, sport, dst, dport, "
     "transport, direction, dialect, offset, wire) -> '' (a message body's Variant record as a dataset row: its "
     "text and JSON value appended to the bytearrays sink[0] and sink[1], the row to the list sink[2]), or None"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject JsonWriterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_dissect.codec._speedups.JsonWriter",
    .tp_doc = "The lossless JSON form as text, built by godot_dissect.codec.fast from jsonform.",
    .tp_basicsize = sizeof(JsonWriter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = JsonWriter_new,
    .tp_dealloc = (destructor)JsonWriter_dealloc,
    .tp_methods = JsonWriter_methods,
};

static int add_names(PyObject *m, const char *attr, const char *const *names, int n)
{
    PyObject *t = PyTuple_New(n);
    int i;
    if (t == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(names[i]);
        if (s == NULL) {
            Py_DECREF(t);
            return -1;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    if (PyModule_AddObject(m, attr, t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

/* set_float_tables(pow5, pow5_inv): Ryu's tables as (low, high) 64-bit halves (fast.py). */
static PyObject *set_float_tables(PyObject *module, PyObject *args)
{
    PyObject *pow5, *inv;
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &pow5, &PyTuple_Type, &inv))
        return NULL;
    if (PyTuple_GET_SIZE(pow5) != RYU_POW5_COUNT || PyTuple_GET_SIZE(inv) != RYU_POW5_INV_COUNT) {
        PyErr_SetString(PyExc_ValueError, "Ryu tables of the wrong size");
        return NULL;
    }
    ryu_ready = 0;
    for (i = 0; i < RYU_POW5_COUNT; i++) {
        unsigned long long lo, hi;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(pow5, i), "KK", &lo, &hi))
            return NULL;
        ryu_pow5[i][0] = lo;
        ryu_pow5[i][1] = hi;
    }
    for (i = 0; i < RYU_POW5_INV_COUNT; i++) {
        unsigned long long lo, hi;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(inv, i), "KK", &lo, &hi))
            return NULL;
        ryu_pow5_inv[i][0] = lo;
        ryu_pow5_inv[i][1] = hi;
    }
    ryu_ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef render_functions[] = {
    {"set_float_tables", set_float_tables, METH_VARARGS,
     "set_float_tables(pow5, pow5_inv): the 125-bit powers of 5 of the shortest-digits algorithm"},
    {NULL, NULL, 0, NULL},
};

int render_init(PyObject *m)
{
    json_byte_classes();
    if (PyModule_AddFunctions(m, render_functions) < 0)
        return -1;
    if (PyType_Ready(&TextWriterType) < 0 || PyType_Ready(&JsonWriterType) < 0)
        return -1;
    if (str_array == NULL && (str_array = PyUnicode_InternFromString("array")) == NULL)
        return -1;
    if (add_names(m, "TEXT_KINDS", TEXT_KIND_NAMES, TK_COUNT) < 0
        || add_names(m, "JSON_KINDS", JSON_KIND_NAMES, JK_COUNT) < 0
        || add_names(m, "STYLE_FIELDS", STYLE_FIELD_NAMES, ST_COUNT) < 0)
        return -1;
    Py_INCREF(&TextWriterType);
    if (PyModule_AddObject(m, "TextWriter", (PyObject *)&TextWriterType) < 0) {
        Py_DECREF(&TextWriterType);
        return -1;
    }
    Py_INCREF(&JsonWriterType);
    if (PyModule_AddObject(m, "JsonWriter", (PyObject *)&JsonWriterType) < 0) {
        Py_DECREF(&JsonWriterType);
        return -1;
    }
    return 0;
}
