/*
 * _speedups.c - the compiled hot path of godot_dissect's Variant codec.
 *
 * This file knows the *layout kinds* of godot_dissect/spec/layouts.py (empty, bool, number,
 * string, struct, ...) and nothing else about Godot: type ids, header flags, component widths,
 * field orders and the Python classes to build all arrive in a per-dialect Table that
 * codec/fast.py compiles from the spec.  A new type in the spec needs no change here unless it
 * brings a new layout kind.
 *
 * The contract with the pure-Python codec is all-or-nothing: Table.decode()/Table.encode() either
 * return exactly what codec/decoder.py / codec/encoder.py would return, or return None ("bail
 * out") and the caller redoes the whole job in Python.  Every error and every rare shape (full
 * Objects, typed containers, NodePath, Signal, odd strides, lenient Godot 3 UTF-8, the depth
 * limit, ...) bails, so error offsets, reasons and codes only ever come from the Python code.
 *
 * Safety rules followed throughout:
 *   - every read is preceded by a bounds check written as `end - pos < need` on signed sizes;
 *   - no allocation is sized from a count read off the wire (containers grow as elements come);
 *   - no C recursion over the data: containers use an explicit heap stack.  The only recursion
 *     is over struct "plans", which come from the spec and are depth-checked when the Table is
 *     built.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "_speedups.h"

/* ---------------------------------------------------------------------------------------------
 * Layout kinds.  KIND_NAMES is exported as _speedups.KINDS so that fast.py maps the spec's
 * layout.kind strings onto these codes; a kind missing here is sent as -1 and always bails.
 * ------------------------------------------------------------------------------------------- */
enum {
    K_BAIL = -1,
    K_EMPTY,
    K_BOOL,
    K_NUMBER,
    K_STRING,
    K_STRUCT,
    K_PACKED_BYTES,
    K_PACKED_STRINGS,
    K_PACKED,
    K_CONTAINER,
    K_OBJECT,
    K_ID64,
    K_COUNT
};

static const char *const KIND_NAMES[K_COUNT] = {
    "empty", "bool", "number", "string", "struct", "packed_bytes", "packed_strings", "packed",
    "container", "object", "id64",
};

/* Scalars, named by their `struct` module codes in the spec (layouts.Scalar.code). */
enum { S_NONE, S_I32, S_U32, S_I64, S_U64, S_F32, S_F64 };
static const Py_ssize_t SCALAR_SIZE[] = {0, 4, 4, 8, 8, 4, 8};

/* A struct plan is (cls, child, ...) where a child is a leaf index (int) into the flat component
 * list in wire order, or a nested plan: Transform3D is (Transform3D, (Basis, (Vector3, 0, 3, 6),
 * ...), (Vector3, 9, 10, 11)).  These bounds are checked when the Table is built. */
#define MAX_PLAN_DEPTH 8
#define ENC_CACHE 64  /* entries of the encoder's class -> Spec cache (a power of two) */
#define STR_CACHE 256 /* entries of the decoder's short-string cache (a power of two) */
#define STR_CACHE_MAX 16 /* longest string (bytes) the cache holds: identifiers, keys */

/* One compiled type: the decoder's entry for a type id, or the encoder's entry for a Python
 * class.  Which fields mean something depends on the kind (see parse_dec / parse_enc). */
typedef struct {
    int kind;
    int narrow, wide;       /* scalar codes; wide = S_NONE when the type has no wide form */
    uint32_t header;        /* encoder: the header word to write */
    uint32_t wide_header;   /* encoder: the header word for the wide form */
    uint32_t wide_mask;     /* decoder: header bits that select the wide form */
    uint32_t aux_mask;      /* decoder: container typed-info bits, object as-id bit */
    uint32_t count_mask;    /* decoder: container count bits */
    int pairs;              /* container: Dictionary rather than Array */
    int direct;             /* packed_strings: the class is a plain tuple subclass */
    Py_ssize_t n;           /* struct: leaves; packed: width; object/id64 (encoder): field index */
    Py_ssize_t stride;      /* packed (decoder): wire bytes per element in the narrow form */
    PyObject *obj;          /* empty: constant; string: wrapper class; struct: plan;
                               packed: from_bytes; packed_strings, object, id64: class to build;
                               number: narrow width marker class */
    PyObject *obj2;         /* number: wide width marker class */
    PyObject *tc, *tc2;     /* packed (decoder): typecode str for the narrow / wide form */
} Spec;

typedef struct {
    PyObject_HEAD
    Spec *dec;              /* indexed by type id */
    Py_ssize_t ndec;
    Spec *enc;              /* indexed by enc_index[type(value)] */
    Py_ssize_t nenc;
    PyObject *enc_index;    /* dict: exact Python class -> index into enc */
    /* Direct-mapped cache in front of enc_index.  Only classes found in enc_index go in, and
     * enc_index keeps them alive, so a cached type pointer can never be a recycled address. */
    struct { PyTypeObject *type; const Spec *spec; } enc_cache[ENC_CACHE];
    uint32_t type_mask;
    PyObject *freeze;       /* values.freeze, for Dictionary keys that are containers */
    Py_ssize_t key_hash_limit; /* spec.transports.MAX_KEYS_OF_ONE_HASH (see the key path of decode_walk) */
    PyObject *array_type;   /* array.array */
    /* Recently decoded short ASCII strings (Dictionary keys, enum-like values repeat a lot):
     * a hit returns the same immutable str instead of a new equal one. */
    PyObject *str_cache[STR_CACHE];
} Table;

static PyObject *str_array; /* interned "array": PackedArray's storage attribute */

/* ---------------------------------------------------------------------------------------------
 * Little-endian loads/stores: a memcpy on little-endian hosts, byte by byte elsewhere (fast.py still
 * disables the extension on big-endian hosts: packed arrays are handed over as raw bytes).
 * ------------------------------------------------------------------------------------------- */
#if PY_LITTLE_ENDIAN
/* on little-endian hosts a memcpy is the same bytes, and compiles to one load or store */
static inline uint32_t ld_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t ld_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void st_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static inline void st_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
#else
static inline uint32_t ld_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t ld_u64(const unsigned char *p)
{
    return (uint64_t)ld_u32(p) | (uint64_t)ld_u32(p + 4) << 32;
}

static inline void st_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void st_u64(unsigned char *p, uint64_t v)
{
    st_u32(p, (uint32_t)v);
    st_u32(p + 4, (uint32_t)(v >> 32));
}
#endif

/* One scalar off the wire as a Python object.  Floats go through PyFloat_Unpack4/8, exactly what
 * the `struct` module uses, so NaN payloads come out bit-identical to the pure path. */
static inline PyObject *scalar_to_py(const unsigned char *p, int code)
{
    double x;
    switch (code) {
    case S_I32: return PyLong_FromLong((long)(int32_t)ld_u32(p));
    case S_U32: return PyLong_FromUnsignedLong((unsigned long)ld_u32(p));
    case S_I64: return PyLong_FromLongLong((long long)(int64_t)ld_u64(p));
    case S_U64: return PyLong_FromUnsignedLongLong((unsigned long long)ld_u64(p));
    case S_F32: x = PyFloat_Unpack4((const char *)p, 1); break;
    case S_F64: x = PyFloat_Unpack8((const char *)p, 1); break;
    default: return NULL;
    }
    if (x == -1.0 && PyErr_Occurred())
        return NULL;
    return PyFloat_FromDouble(x);
}

/* Write one Python number as scalar `code`; -1 (bail) where `struct.pack` would complain or
 * convert (a non-int for an int slot, a non-float for a float slot, out of range, overflow). */
static int py_to_scalar(unsigned char *p, int code, PyObject *v)
{
    int overflow = 0;
    long long x;
    unsigned long long u;
    switch (code) {
    case S_I32:
    case S_U32:
    case S_I64:
        if (!PyLong_Check(v))
            return -1;
        x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred()))
            return -1;
        if (code == S_I32 && (x < INT32_MIN || x > INT32_MAX))
            return -1;
        if (code == S_U32 && (x < 0 || x > (long long)UINT32_MAX))
            return -1;
        if (code == S_I64)
            st_u64(p, (uint64_t)x);
        else
            st_u32(p, (uint32_t)x);
        return 0;
    case S_U64:
        if (!PyLong_Check(v))
            return -1;
        u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred())
            return -1;
        st_u64(p, (uint64_t)u);
        return 0;
    case S_F32:
        if (!PyFloat_Check(v))
            return -1;
        return PyFloat_Pack4(PyFloat_AS_DOUBLE(v), (char *)p, 1);
    case S_F64:
        if (!PyFloat_Check(v))
            return -1;
        return PyFloat_Pack8(PyFloat_AS_DOUBLE(v), (char *)p, 1);
    }
    return -1;
}

/* Would the narrow scalar hold `v` exactly?  The engine's (and encoder's) test for picking the
 * narrow form: for floats, a float32 round trip that compares equal (so never for NaN).  When it
 * does, its wire bytes are left in `p` (room for 8).  1 yes, 0 no, -1 error. */
static int fits_narrow(int narrow, PyObject *v, unsigned char *p)
{
    if (narrow == S_F32) {
        double x;
        if (!PyFloat_Check(v))
            return -1;
        x = PyFloat_AS_DOUBLE(v);
        if (PyFloat_Pack4(x, (char *)p, 1) < 0) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return -1;
            PyErr_Clear();
            return 0;
        }
        return PyFloat_Unpack4((const char *)p, 1) == x;
    }
    if (narrow == S_F64 && !PyFloat_Check(v))
        return -1;
    if (py_to_scalar(p, narrow, v) == 0)
        return 1;
    PyErr_Clear();
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Struct plans (math types): build a NamedTuple tree from flat components, or flatten one.
 * ------------------------------------------------------------------------------------------- */

/* Checks a plan from fast.py once, so build/flatten can use unchecked tuple access. */
static int check_plan(PyObject *plan, int depth, unsigned char *seen, Py_ssize_t *leaves)
{
    Py_ssize_t i, n;
    PyObject *cls;
    if (depth > MAX_PLAN_DEPTH || !PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) < 2) {
        PyErr_SetString(PyExc_ValueError, "bad struct plan");
        return -1;
    }
    cls = PyTuple_GET_ITEM(plan, 0);
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "struct plan class must be a tuple subclass");
        return -1;
    }
    n = PyTuple_GET_SIZE(plan);
    for (i = 1; i < n; i++) {
        PyObject *c = PyTuple_GET_ITEM(plan, i);
        if (PyLong_CheckExact(c)) {
            Py_ssize_t k = PyLong_AsSsize_t(c);
            if (k < 0 || k >= MAX_LEAVES || seen[k]) {
                PyErr_SetString(PyExc_ValueError, "bad struct plan leaf");
                return -1;
            }
            seen[k] = 1;
            (*leaves)++;
        } else if (check_plan(c, depth + 1, seen, leaves) < 0) {
            return -1;
        }
    }
    return 0;
}

/* tuple.__new__(cls, items) for every node, as the pure decoder's compiled builder does (it skips
 * the math classes' float coercion: wire values are already the right Python type). */
static PyObject *plan_build(PyObject *plan, PyObject *const *vals)
{
    PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(plan, 0);
    Py_ssize_t i, n = PyTuple_GET_SIZE(plan) - 1;
    PyObject *obj = cls->tp_alloc(cls, n);
    if (obj == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        PyObject *c = PyTuple_GET_ITEM(plan, i + 1), *item;
        if (PyLong_CheckExact(c)) {
            item = vals[PyLong_AsSsize_t(c)];
            Py_INCREF(item);
        } else if ((item = plan_build(c, vals)) == NULL) {
            Py_DECREF(obj);
            return NULL;
        }
        PyTuple_SET_ITEM(obj, i, item);
    }
    /* Leaves are ints and floats and children are built here the same way, and the class has no
     * __dict__ nor any other slot (its size is a tuple's): the value can never be part of a cycle,
     * so the collector need not walk it (CPython untracks such exact tuples itself, but never
     * tuple subclasses). */
    if (cls->tp_dictoffset == 0 && cls->tp_basicsize == PyTuple_Type.tp_basicsize && PyObject_GC_IsTracked(obj))
        PyObject_GC_UnTrack(obj);
    return obj;
}

/* The encoder's attribute paths (v.basis.x.y) as tuple indexing.  Only exact classes of the
 * right size are accepted: that is when `.x` means "item 0"; anything else bails.  Shared with
 * _render.c (the text notation writes components in wire order too). */
int plan_flatten(PyObject *plan, PyObject *v, PyObject **vals)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(plan) - 1;
    if ((PyObject *)Py_TYPE(v) != PyTuple_GET_ITEM(plan, 0) || PyTuple_GET_SIZE(v) != n)
        return -1;
    for (i = 0; i < n; i++) {
        PyObject *c = PyTuple_GET_ITEM(plan, i + 1);
        if (PyLong_CheckExact(c))
            vals[PyLong_AsSsize_t(c)] = PyTuple_GET_ITEM(v, i);
        else if (plan_flatten(c, PyTuple_GET_ITEM(v, i), vals) < 0)
            return -1;
    }
    return 0;
}

/* Grow a stack that starts in a caller's local array; returns the new base or NULL. */
static void *grow_stack(void *base, void *local, Py_ssize_t *cap, size_t item)
{
    Py_ssize_t ncap = *cap * 2;
    void *nb;
    if ((size_t)ncap > PY_SSIZE_T_MAX / item)
        return NULL;
    if (base == local) {
        nb = PyMem_Malloc((size_t)ncap * item);
        if (nb != NULL)
            memcpy(nb, base, (size_t)*cap * item);
    } else {
        nb = PyMem_Realloc(base, (size_t)ncap * item);
    }
    if (nb != NULL)
        *cap = ncap;
    return nb;
}

/* ---------------------------------------------------------------------------------------------
 * Decoder.  Each leaf reader takes the position just after the 4-byte header, returns a new
 * reference and advances r->pos, or returns NULL to bail (a Python exception may be set; the
 * caller clears it).
 * ------------------------------------------------------------------------------------------- */
typedef struct {
    const unsigned char *buf;
    Py_ssize_t pos, end;
    PyObject *data;   /* the caller's buffer object */
    PyObject *mv;     /* memoryview of data, made on first use (packed arrays) */
    Table *table;
} Reader;

#define NEED(r, n) ((r)->end - (r)->pos < (Py_ssize_t)(n))

static PyObject *read_empty(Reader *r, const Spec *s, uint32_t header)
{
    Py_INCREF(s->obj);
    return s->obj;
}

static PyObject *read_bool(Reader *r, const Spec *s, uint32_t header)
{
    uint32_t v;
    if (NEED(r, 4))
        return NULL;
    v = ld_u32(r->buf + r->pos);
    r->pos += 4;
    return PyBool_FromLong(v != 0);
}

/* Number: narrow, or wide with the flag.  Width markers (WideInt, Float64, Float32) keep the
 * wire width where the encoder would not pick it again: a wide value the narrow form holds, a
 * narrow value it does not (a float32 NaN). */
static PyObject *read_number(Reader *r, const Spec *s, uint32_t header)
{
    int wide = s->wide != S_NONE && (header & s->wide_mask);
    int code = wide ? s->wide : s->narrow;
    PyObject *marker = wide ? s->obj2 : s->obj, *v, *w;
    unsigned char tmp[8];
    int fits;
    if (NEED(r, SCALAR_SIZE[code]))
        return NULL;
    v = scalar_to_py(r->buf + r->pos, code);
    if (v == NULL)
        return NULL;
    r->pos += SCALAR_SIZE[code];
    if (marker == NULL)
        return v;
    if ((fits = fits_narrow(s->narrow, v, tmp)) != wide) {
        if (fits < 0) {
            Py_DECREF(v);
            return NULL;
        }
        return v;  /* the encoder would pick this width again: no marker */
    }
    w = PyObject_CallOneArg(marker, v);
    Py_DECREF(v);
    return w;
}

/* Slot of a short byte string in the string cache: a multiplicative hash of its first and
 * last 8 bytes and its length (cheap, and good enough to spread keys). */
static inline size_t str_slot(const char *p, Py_ssize_t n)
{
    uint64_t a = 0, b = 0;
    memcpy(&a, p, (size_t)(n < 8 ? n : 8));
    if (n > 8)
        memcpy(&b, p + n - 8, 8);
    a = (a ^ (b * 0x9E3779B97F4A7C15ull) ^ (uint64_t)n) * 0xFF51AFD7ED558CCDull;
    return (size_t)(a >> 56) & (STR_CACHE - 1);
}

/* Godot's String: i32 length, UTF-8, padding to 4.  Mirrors utf8.decode_strict: a leading BOM
 * is skipped and the string stops at the first NUL.  Invalid UTF-8 bails: an error in Godot 4,
 * and the lenient Godot 3 reading lives in Python only.  Short ASCII strings
 * go through the Table's string cache. */
static PyObject *read_text(Reader *r)
{
    Py_ssize_t n, start;
    const char *p;
    const void *nul;
    PyObject *v, **slot = NULL;
    if (NEED(r, 4))
        return NULL;
    n = (int32_t)ld_u32(r->buf + r->pos);
    start = r->pos + 4;
    if (n < 0 || r->end - start < n + (-n & 3))
        return NULL;
    r->pos = start + n + (-n & 3);
    p = (const char *)r->buf + start;
    if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
        p += 3;
        n -= 3;
    }
    if ((nul = memchr(p, 0, (size_t)n)) != NULL)
        n = (const char *)nul - p;
    if (n <= STR_CACHE_MAX) {
        /* a cached ASCII str holds exactly its UTF-8 bytes, so memcmp is string equality */
        slot = &r->table->str_cache[str_slot(p, n)];
        v = *slot;
        if (v != NULL && PyUnicode_GET_LENGTH(v) == n && memcmp(PyUnicode_DATA(v), p, (size_t)n) == 0) {
            Py_INCREF(v);
            return v;
        }
    }
    v = PyUnicode_DecodeUTF8(p, n, NULL);
    if (slot != NULL && v != NULL && PyUnicode_IS_ASCII(v)) {
        Py_INCREF(v);
        Py_XSETREF(*slot, v);
    }
    return v;
}

static PyObject *read_string(Reader *r, const Spec *s, uint32_t header)
{
    PyObject *v = read_text(r), *w;
    if (v == NULL || s->obj == NULL)
        return v;
    w = PyObject_CallOneArg(s->obj, v);  /* e.g. StringName(s) */
    Py_DECREF(v);
    return w;
}

/* Struct: n same-width components, then the plan builds the value. */
static PyObject *read_struct(Reader *r, const Spec *s, uint32_t header)
{
    int code;
    if (s->wide == S_NONE && (header & s->wide_mask))
        return NULL;  /* 64-bit components for a single-precision build: Python rounds them */
    code = (s->wide != S_NONE && (header & s->wide_mask)) ? s->wide : s->narrow;
    Py_ssize_t i, size = SCALAR_SIZE[code];
    PyObject *vals[MAX_LEAVES], *v = NULL;
    if (NEED(r, size * s->n))
        return NULL;
    for (i = 0; i < s->n; i++) {
        vals[i] = scalar_to_py(r->buf + r->pos + i * size, code);
        if (vals[i] == NULL)
            goto done;
    }
    v = plan_build(s->obj, vals);
    if (v != NULL)
        r->pos += size * s->n;
done:
    while (i-- > 0)
        Py_DECREF(vals[i]);
    return v;
}

/* PackedByteArray: i32 count, bytes; the padding is counted as used even when it is missing. */
static PyObject *read_packed_bytes(Reader *r, const Spec *s, uint32_t header)
{
    Py_ssize_t n;
    PyObject *v;
    if (NEED(r, 4))
        return NULL;
    n = (int32_t)ld_u32(r->buf + r->pos);
    if (n < 0 || n > r->end - r->pos - 4)
        return NULL;
    v = PyBytes_FromStringAndSize((const char *)r->buf + r->pos + 4, n);
    if (v != NULL)
        r->pos += 4 + n + (-n & 3);
    return v;
}

/* A tuple subclass that neither overrides __new__/__init__ nor has a metaclass: calling it
 * with items is tuple.__new__(cls, items), which C can do without the intermediate list. */
static int plain_tuple_class(PyObject *cls)
{
    PyTypeObject *tp = (PyTypeObject *)cls;
    return PyType_Check(cls) && Py_IS_TYPE(cls, &PyType_Type) && PyType_IsSubtype(tp, &PyTuple_Type)
        && tp->tp_new == PyTuple_Type.tp_new && tp->tp_init == PyTuple_Type.tp_init;
}

/* PackedStringArray: i32 count (negative = empty), then strings.  Items are collected in a
 * buffer that grows string by string (each needs >= 4 bytes), so a huge count cannot allocate
 * before the data runs out; the class is then built from them (directly when it is a plain
 * tuple subclass). */
static PyObject *read_packed_strings(Reader *r, const Spec *s, uint32_t header)
{
    PyObject *local[32], **items = local, *v = NULL;
    Py_ssize_t i, n, count = 0, cap = 32;
    if (NEED(r, 4))
        return NULL;
    n = (int32_t)ld_u32(r->buf + r->pos);
    r->pos += 4;
    for (i = 0; i < n; i++) {
        PyObject *str = read_text(r);
        if (str == NULL)
            goto done;
        if (count == cap) {
            PyObject **grown = grow_stack(items, local, &cap, sizeof(PyObject *));
            if (grown == NULL) {
                Py_DECREF(str);
                goto done;
            }
            items = grown;
        }
        items[count++] = str;
    }
    if (s->direct) {
        PyTypeObject *cls = (PyTypeObject *)s->obj;
        if ((v = cls->tp_alloc(cls, count)) != NULL) {
            for (i = 0; i < count; i++)
                PyTuple_SET_ITEM(v, i, items[i]);  /* references move into the tuple */
            count = 0;
        }
    } else {
        PyObject *list = PyList_New(count);
        if (list != NULL) {
            for (i = 0; i < count; i++)
                PyList_SET_ITEM(list, i, items[i]);
            count = 0;
            v = PyObject_CallOneArg(s->obj, list);
            Py_DECREF(list);
        }
    }
done:
    while (count > 0)
        Py_DECREF(items[--count]);
    if (items != local)
        PyMem_Free(items);
    return v;
}

/* Packed fixed elements: handed to the class's from_bytes() as one memoryview slice (no copy
 * here; the array copies once).  Padded strides (Godot 3 double builds) bail. */
static PyObject *read_packed(Reader *r, const Spec *s, uint32_t header)
{
    int wide = s->wide != S_NONE && (header & s->wide_mask);
    Py_ssize_t n, esize, start;
    PyObject *slice, *v;
    if (s->wide == S_NONE && (header & s->wide_mask))
        return NULL;  /* 64-bit elements for a single-precision build: Python rounds them */
    if (!wide && s->stride != SCALAR_SIZE[s->narrow] * s->n)
        return NULL;
    esize = wide ? SCALAR_SIZE[s->wide] * s->n : s->stride;
    if (NEED(r, 4))
        return NULL;
    n = (int32_t)ld_u32(r->buf + r->pos);
    start = r->pos + 4;
    if (n < 0 || n * esize > r->end - start)
        return NULL;
    if (r->mv == NULL && (r->mv = PyMemoryView_FromObject(r->data)) == NULL)
        return NULL;
    slice = PySequence_GetSlice(r->mv, start, start + n * esize);
    if (slice == NULL)
        return NULL;
    v = PyObject_CallFunctionObjArgs(s->obj, slice, wide ? s->tc2 : s->tc, NULL);
    Py_DECREF(slice);
    if (v != NULL)
        r->pos = start + n * esize;
    return v;
}

/* Object: only the as-id form (u64 instance id); a full Object bails (allow_objects rules,
 * property frames and the null forms stay in Python). */
static PyObject *read_object(Reader *r, const Spec *s, uint32_t header)
{
    PyObject *id, *v;
    if (!(header & s->aux_mask) || NEED(r, 8))
        return NULL;
    if ((id = PyLong_FromUnsignedLongLong(ld_u64(r->buf + r->pos))) == NULL)
        return NULL;
    v = PyObject_CallOneArg(s->obj, id);
    Py_DECREF(id);
    if (v != NULL)
        r->pos += 8;
    return v;
}

static PyObject *read_id64(Reader *r, const Spec *s, uint32_t header)
{
    PyObject *id, *v;
    if (NEED(r, 8))
        return NULL;
    if ((id = PyLong_FromUnsignedLongLong(ld_u64(r->buf + r->pos))) == NULL)
        return NULL;
    v = PyObject_CallOneArg(s->obj, id);
    Py_DECREF(id);
    if (v != NULL)
        r->pos += 8;
    return v;
}

/* One leaf value (anything but a container); a switch rather than a table of function
 * pointers so the compiler can inline the common readers into the walker's loop. */
static inline PyObject *read_leaf(Reader *r, const Spec *s, uint32_t header)
{
    switch (s->kind) {
    case K_EMPTY: return read_empty(r, s, header);
    case K_BOOL: return read_bool(r, s, header);
    case K_NUMBER: return read_number(r, s, header);
    case K_STRING: return read_string(r, s, header);
    case K_STRUCT: return read_struct(r, s, header);
    case K_PACKED_BYTES: return read_packed_bytes(r, s, header);
    case K_PACKED_STRINGS: return read_packed_strings(r, s, header);
    case K_PACKED: return read_packed(r, s, header);
    case K_OBJECT: return read_object(r, s, header);
    case K_ID64: return read_id64(r, s, header);
    }
    return NULL;  /* K_BAIL: a layout kind this file does not know */
}

/* One open Array or Dictionary while its elements are read. */
typedef struct {
    PyObject *container;  /* list or dict (owned) */
    PyObject *key;        /* Dictionary: key read, value pending (owned), else NULL */
    PyObject *hashes;     /* Dictionary: keys per hash of keys whose hash a message chooses (owned), or NULL */
    Py_ssize_t left;      /* elements (pairs) still to read */
} Frame;

/* Count the hash of a Dictionary key whose hash a message can choose (decoder._count_hash): 0, or -1
 * (bail: Python refuses it) once more than `limit` keys of the frame's Dictionary share it. */
static int count_key_hash(Frame *f, PyObject *key, Py_ssize_t limit)
{
    PyObject *h, *old, *n;
    Py_ssize_t count = 1;
    Py_hash_t hash = PyObject_Hash(key);
    int rc;
    if (hash == -1)
        return -1;
    if (f->hashes == NULL && (f->hashes = PyDict_New()) == NULL)
        return -1;
    if ((h = PyLong_FromSsize_t(hash)) == NULL)
        return -1;
    old = PyDict_GetItemWithError(f->hashes, h);  /* borrowed */
    if (old != NULL)
        count = PyLong_AsSsize_t(old) + 1;
    if ((old == NULL && PyErr_Occurred()) || count > limit || (n = PyLong_FromSsize_t(count)) == NULL) {
        Py_DECREF(h);
        return -1;
    }
    rc = PyDict_SetItem(f->hashes, h, n);
    Py_DECREF(h);
    Py_DECREF(n);
    return rc;
}

/* An empty list with room reserved for up to n elements, taken from *budget.  The list's size
 * stays 0: nothing half-built is ever visible, only its capacity is ahead. */
static PyObject *new_list(Py_ssize_t n, Py_ssize_t *budget)
{
    Py_ssize_t k = n < *budget ? n : *budget;
    PyObject *list = PyList_New(k);
    if (list != NULL) {
        Py_SET_SIZE(list, 0);
        *budget -= k;
    }
    return list;
}

/* PyList_Append that stores straight into reserved room; steals `value`. */
static inline int list_append(PyObject *list, PyObject *value)
{
    PyListObject *l = (PyListObject *)list;
    Py_ssize_t n = Py_SIZE(l);
    int rc;
    if (n < l->allocated) {
        l->ob_item[n] = value;
        Py_SET_SIZE(l, n + 1);
        return 0;
    }
    rc = PyList_Append(list, value);
    Py_DECREF(value);
    return rc;
}

/* The walker: decoder.decode_prefix's loop with a C stack of frames.  Returns the decoded value
 * (new reference) and sets *pos, or NULL to bail. */
static PyObject *decode_walk(Reader *r, long long max_depth)
{
    Table *t = r->table;
    Frame local[64], *frames = local;
    Py_ssize_t depth = 0, cap = 64;
    /* List slots that may still be reserved ahead of their elements: every element is a Variant
     * of at least 4 bytes, so valid data never needs more, and garbage counts cannot make the
     * reservations exceed twice the input. */
    Py_ssize_t budget = (r->end - r->pos) / 4;
    PyObject *value = NULL;

    for (;;) {
        uint32_t header, t_id;
        const Spec *s;
        /* ---- read one Variant at pos ---- */
        if (depth > max_depth)  /* the engine's nesting limit: let Python raise it */
            goto bail;
        if (NEED(r, 4))
            goto bail;
        header = ld_u32(r->buf + r->pos);
        t_id = header & t->type_mask;
        if (t_id >= (uint32_t)t->ndec)
            goto bail;
        s = &t->dec[t_id];
        r->pos += 4;
        if (s->kind == K_CONTAINER) {
            Py_ssize_t n;
            PyObject *c;
            if (header & s->aux_mask)  /* typed container info: Python settles the elements */
                goto bail;
            if (NEED(r, 4))
                goto bail;
            n = ld_u32(r->buf + r->pos) & s->count_mask;
            r->pos += 4;
            if ((c = s->pairs ? PyDict_New() : new_list(n, &budget)) == NULL)
                goto bail;
            if (n > 0) {
                if (depth == cap) {
                    Frame *nf = grow_stack(frames, local, &cap, sizeof(Frame));
                    if (nf == NULL) {
                        Py_DECREF(c);
                        goto bail;
                    }
                    frames = nf;
                }
                frames[depth].container = c;
                frames[depth].key = NULL;
                frames[depth].hashes = NULL;
                frames[depth].left = n;
                depth++;
                continue;
            }
            value = c;
        } else if ((value = read_leaf(r, s, header)) == NULL) {
            goto bail;
        }
        /* A run of narrow numbers without width markers in an Array (Array of ints): straight into
         * the list while the next header is the same type in the narrow form. */
        if (s->kind == K_NUMBER && s->obj == NULL && depth > 0 && !(header & s->wide_mask)
            && PyList_CheckExact(frames[depth - 1].container) && frames[depth - 1].left > 1
            && (s->narrow == S_I32 || s->narrow == S_I64)) {
            Frame *f = &frames[depth - 1];
            Py_ssize_t size = SCALAR_SIZE[s->narrow];
            if (list_append(f->container, value) < 0) {
                value = NULL;
                goto bail;
            }
            value = NULL;
            f->left--;
            while (f->left > 1 && !NEED(r, 4 + size) && ld_u32(r->buf + r->pos) == header) {
                const unsigned char *q = r->buf + r->pos + 4;
                PyObject *v = s->narrow == S_I32 ? PyLong_FromLong((long)(int32_t)ld_u32(q))
                                                 : PyLong_FromLongLong((long long)(int64_t)ld_u64(q));
                if (v == NULL || list_append(f->container, v) < 0)
                    goto bail;
                r->pos += 4 + size;
                f->left--;
            }
            continue;  /* the last element goes the general way, which closes the frame */
        }
        /* ---- hand the value to the open containers ---- */
        for (;;) {
            Frame *f;
            if (depth == 0)
                goto done;
            f = &frames[depth - 1];
            if (PyList_CheckExact(f->container)) {
                if (list_append(f->container, value) < 0)
                    goto bail;
            } else if (f->key == NULL) {
                /* Godot takes any Variant as a key; Python needs containers frozen. */
                if (PyList_Check(value) || PyDict_Check(value)) {
                    PyObject *frozen = PyObject_CallOneArg(t->freeze, value);
                    Py_DECREF(value);
                    if (frozen == NULL)
                        goto bail;
                    value = frozen;
                }
                /* a key whose hash a message can choose (Arrays, Dictionaries, math values; not
                   values.SAFE_KEY_TYPES): at most key_hash_limit of one hash per Dictionary */
                if (!(PyUnicode_Check(value) || PyLong_Check(value) || PyFloat_Check(value)
                      || value == Py_None || PyBytes_CheckExact(value))
                    && count_key_hash(f, value, t->key_hash_limit) < 0) {
                    Py_DECREF(value);
                    goto bail;
                }
                /* a NaN key: the engine takes all of a Dictionary's NaN keys for one (decoder: f.nan) */
                if (PyFloat_Check(value) && isnan(PyFloat_AS_DOUBLE(value))) {
                    Py_DECREF(value);
                    goto bail;
                }
                f->key = value;
                value = NULL;
                break;  /* now read the value */
            } else {
                Py_ssize_t before = PyDict_GET_SIZE(f->container);
                int rc = PyDict_SetItem(f->container, f->key, value);
                Py_DECREF(value);
                Py_CLEAR(f->key);
                if (rc < 0)  /* unhashable key: Python reports it */
                    goto bail;
                /* a key equal to an earlier one: Python tells whether Godot would call them equal
                   (decoder._check_key: True, 1 and 1.0 are three keys in Godot) */
                if (PyDict_GET_SIZE(f->container) == before)
                    goto bail;
            }
            value = NULL;
            if (--f->left > 0)
                break;
            value = f->container;  /* the frame's reference moves to value */
            Py_CLEAR(f->hashes);
            depth--;
        }
    }
done:
    if (frames != local)
        PyMem_Free(frames);
    return value;
bail:
    while (depth > 0) {
        depth--;
        Py_XDECREF(frames[depth].container);
        Py_XDECREF(frames[depth].key);
        Py_XDECREF(frames[depth].hashes);
    }
    if (frames != local)
        PyMem_Free(frames);
    return NULL;
}

/* Inputs at least this long are decoded with the collector paused (see table_decode). */
#define GC_PAUSE_BYTES 4096

/* Decode one Variant of `data` (a plain byte buffer) at offset, up to end (-1: its length).
 * Returns a new reference and sets *used, or NULL to bail (no exception left set).
 *
 * A big input creates many containers, each a tracked object that counts towards the next
 * collection: the collector would walk the half-built value again and again (and, every tenth
 * time, everything older).  It is paused for the walk instead, then resumed: nothing is untracked,
 * so cyclic garbage is found as before, and what was made is walked once at the next collection. */
static PyObject *table_decode(Table *t, PyObject *data, long long max_depth, Py_ssize_t offset,
                              Py_ssize_t end, Py_ssize_t *used)
{
    Py_buffer view;
    Reader r;
    PyObject *value;
    int gc_was = 0, release = 0;
    if (PyBytes_CheckExact(data)) {
        view.buf = PyBytes_AS_STRING(data);
        view.len = PyBytes_GET_SIZE(data);
    } else {
        /* Only plain byte buffers: their slices, bytes() and len() mean what the pure path assumes. */
        if (PyMemoryView_Check(data)) {
            Py_buffer *mb = PyMemoryView_GET_BUFFER(data);
            if (mb->ndim != 1 || mb->itemsize != 1)
                return NULL;
        } else if (!PyByteArray_CheckExact(data)) {
            return NULL;
        }
        if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
            PyErr_Clear();
            return NULL;
        }
        release = 1;
    }
    if (end < 0)
        end = view.len;
    value = NULL;
    if (end <= view.len && offset >= 0 && offset <= end) {
        r.buf = view.buf;
        r.pos = offset;
        r.end = end;
        r.data = data;
        r.mv = NULL;
        r.table = t;
        if (end - offset >= GC_PAUSE_BYTES)
            gc_was = PyGC_Disable();
        value = decode_walk(&r, max_depth);
        if (gc_was)
            PyGC_Enable();
        Py_XDECREF(r.mv);
        *used = r.pos - offset;
    }
    if (release)
        PyBuffer_Release(&view);
    if (value == NULL)
        PyErr_Clear();
    return value;
}

/* Table.decode(data, allow_objects, max_depth, offset, end) -> (value, bytes_used) | None */
static PyObject *Table_decode(Table *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *value, *res;
    long long max_depth;
    Py_ssize_t offset, end = -1, used = 0;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "decode(data, allow_objects, max_depth, offset, end)");
        return NULL;
    }
    /* full Objects are the only thing allow_objects changes, and they always bail */
    if (!PyLong_CheckExact(args[2]) || !PyLong_CheckExact(args[3]))
        Py_RETURN_NONE;
    max_depth = PyLong_AsLongLong(args[2]);
    offset = PyLong_AsSsize_t(args[3]);
    if (args[4] != Py_None) {
        if (!PyLong_CheckExact(args[4]) || (end = PyLong_AsSsize_t(args[4])) < 0) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if ((value = table_decode(self, args[0], max_depth, offset, end, &used)) == NULL)
        Py_RETURN_NONE;
    res = Py_BuildValue("(Nn)", value, used);
    if (res == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return res;
}

/* ---------------------------------------------------------------------------------------------
 * Encoder.  Output goes straight into a bytes object that grows by doubling and is shrunk once
 * at the end (the final resize usually happens in place), so a big packed array is copied once.
 * ------------------------------------------------------------------------------------------- */
typedef struct {
    PyObject *bytes;
    unsigned char *p;
    Py_ssize_t len, cap;
} Out;

static int out_reserve(Out *o, Py_ssize_t extra)
{
    Py_ssize_t want, cap;
    if (o->cap - o->len >= extra)
        return 0;
    if (extra > PY_SSIZE_T_MAX - o->len)
        return -1;
    want = o->len + extra;
    cap = o->cap <= PY_SSIZE_T_MAX / 2 ? o->cap * 2 : PY_SSIZE_T_MAX;
    if (cap < want)
        cap = want;
    if (_PyBytes_Resize(&o->bytes, cap) < 0)
        return -1;
    o->cap = cap;
    o->p = (unsigned char *)PyBytes_AS_STRING(o->bytes);
    return 0;
}

static int out_u32(Out *o, uint32_t v)
{
    if (out_reserve(o, 4) < 0)
        return -1;
    st_u32(o->p + o->len, v);
    o->len += 4;
    return 0;
}

static int out_raw(Out *o, const void *src, Py_ssize_t n)
{
    if (out_reserve(o, n) < 0)
        return -1;
    memcpy(o->p + o->len, src, (size_t)n);
    o->len += n;
    return 0;
}

static int out_zeros(Out *o, Py_ssize_t n)
{
    if (out_reserve(o, n) < 0)
        return -1;
    memset(o->p + o->len, 0, (size_t)n);
    o->len += n;
    return 0;
}

static int out_scalar(Out *o, int code, PyObject *v)
{
    if (out_reserve(o, SCALAR_SIZE[code]) < 0 || py_to_scalar(o->p + o->len, code, v) < 0)
        return -1;
    o->len += SCALAR_SIZE[code];
    return 0;
}

/* `u32 length, UTF-8, NUL terminator if asked, zero padding to 4`, with the encoder's
 * s.encode("utf-8", "surrogatepass"): ASCII strings are copied straight out of the str. */
static int out_text(Out *o, PyObject *s, int nul)
{
    PyObject *tmp = NULL;
    const char *p;
    Py_ssize_t n;
    int rc;
    if (!PyUnicode_Check(s))
        return -1;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0)
        return -1;
#endif
    if (PyUnicode_IS_ASCII(s)) {
        p = (const char *)PyUnicode_DATA(s);
        n = PyUnicode_GET_LENGTH(s);
    } else {
        if ((tmp = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass")) == NULL)
            return -1;
        p = PyBytes_AS_STRING(tmp);
        n = PyBytes_GET_SIZE(tmp);
    }
    rc = -1;
    if (n + nul <= UINT32_MAX && out_reserve(o, 4 + n + nul + 3) == 0) {
        Py_ssize_t total = n + nul;
        st_u32(o->p + o->len, (uint32_t)total);
        memcpy(o->p + o->len + 4, p, (size_t)n);
        memset(o->p + o->len + 4 + n, 0, (size_t)(nul + (-total & 3)));
        o->len += 4 + total + (-total & 3);
        rc = 0;
    }
    Py_XDECREF(tmp);
    return rc;
}

/* Number: the same width choice as the pure encoder (markers first, then "does narrow hold
 * it"); the value is converted once when it goes out narrow. */
static int write_number(Out *o, const Spec *s, PyObject *v)
{
    PyObject *tp = (PyObject *)Py_TYPE(v);
    unsigned char tmp[8];
    int fits = 1;
    if (out_reserve(o, 4 + 8) < 0)
        return -1;
    if (tp == s->obj2 || (tp != s->obj && (fits = fits_narrow(s->narrow, v, tmp)) == 0)) {
        st_u32(o->p + o->len, s->wide_header);
        o->len += 4;
        return out_scalar(o, s->wide, v);
    }
    st_u32(o->p + o->len, s->header);
    o->len += 4;
    if (tp == s->obj)  /* narrow marker: written narrow whatever the value */
        return out_scalar(o, s->narrow, v);
    if (fits < 0)
        return -1;
    if (SCALAR_SIZE[s->narrow] == 4) {  /* constant sizes: inlined copies, not a memcpy call */
        memcpy(o->p + o->len, tmp, 4);
        o->len += 4;
    } else {
        memcpy(o->p + o->len, tmp, 8);
        o->len += 8;
    }
    return 0;
}

static int write_struct(Out *o, const Spec *s, PyObject *v)
{
    PyObject *vals[MAX_LEAVES];
    Py_ssize_t i;
    if (plan_flatten(s->obj, v, vals) < 0 || out_u32(o, s->header) < 0)
        return -1;
    for (i = 0; i < s->n; i++)
        if (out_scalar(o, s->narrow, vals[i]) < 0)
            return -1;
    return 0;
}

static int write_packed_bytes(Out *o, const Spec *s, PyObject *v)
{
    Py_buffer b;
    int rc = -1;
    if (PyObject_GetBuffer(v, &b, PyBUF_SIMPLE) < 0)
        return -1;
    if (b.len <= UINT32_MAX && out_u32(o, s->header) == 0 && out_u32(o, (uint32_t)b.len) == 0
        && out_raw(o, b.buf, b.len) == 0 && out_zeros(o, -b.len & 3) == 0)
        rc = 0;
    PyBuffer_Release(&b);
    return rc;
}

/* Each element carries a NUL terminator in its length, as the engine writes them. */
static int write_packed_strings(Out *o, const Spec *s, PyObject *v)
{
    Py_ssize_t i, n = PyTuple_GET_SIZE(v);
    if (n > UINT32_MAX || out_u32(o, s->header) < 0 || out_u32(o, (uint32_t)n) < 0)
        return -1;
    for (i = 0; i < n; i++)
        if (out_text(o, PyTuple_GET_ITEM(v, i), 1) < 0)
            return -1;
    return 0;
}

/* Packed fixed elements straight from the array.array's buffer: a memcpy when the typecode is
 * the wire's, float32 -> float64 widening element by element; anything else bails. */
static int write_packed(Out *o, Table *t, const Spec *s, PyObject *v)
{
    Py_buffer b;
    PyObject *arr = PyObject_GetAttr(v, str_array);
    Py_ssize_t items, count, i;
    char have;
    int rc = -1;
    if (arr == NULL)
        return -1;
    if (!Py_IS_TYPE(arr, (PyTypeObject *)t->array_type)
        || PyObject_GetBuffer(arr, &b, PyBUF_FORMAT) < 0) {
        Py_DECREF(arr);
        return -1;
    }
    have = (b.format && b.format[0] && !b.format[1]) ? b.format[0] : 0;
    items = b.itemsize > 0 ? b.len / b.itemsize : 0;
    count = items / s->n;  /* len(v) */
    if (count > UINT32_MAX || out_u32(o, s->header) < 0 || out_u32(o, (uint32_t)count) < 0)
        goto done;
    if ((have == 'f' && s->narrow == S_F32 && b.itemsize == 4) || (have == 'd' && s->narrow == S_F64 && b.itemsize == 8)
        || (have == 'i' && s->narrow == S_I32 && b.itemsize == 4) || (have == 'q' && s->narrow == S_I64 && b.itemsize == 8)) {
        rc = out_raw(o, b.buf, b.len);
    } else if (have == 'f' && s->narrow == S_F64 && b.itemsize == 4) {
        const float *src = b.buf;
        if (out_reserve(o, items * 8) < 0)
            goto done;
        for (i = 0; i < items; i++) {
            double x = src[i];
            memcpy(o->p + o->len + i * 8, &x, 8);
        }
        o->len += items * 8;
        rc = 0;
    }
done:
    PyBuffer_Release(&b);
    Py_DECREF(arr);
    return rc;
}

/* ObjectID (as-id form) and RID: header, then the u64 in field `n`. */
static int write_id(Out *o, const Spec *s, PyObject *v)
{
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) <= s->n || out_u32(o, s->header) < 0)
        return -1;
    return out_scalar(o, S_U64, PyTuple_GET_ITEM(v, s->n));
}

/* The encoder's Spec for an exact class, through the cache; NULL when the C path has none. */
static const Spec *enc_spec(Table *t, PyTypeObject *tp)
{
    size_t slot = ((uintptr_t)tp >> 4) & (ENC_CACHE - 1);
    PyObject *idx;
    if (t->enc_cache[slot].type == tp)
        return t->enc_cache[slot].spec;
    if ((idx = PyDict_GetItemWithError(t->enc_index, (PyObject *)tp)) == NULL)
        return NULL;
    t->enc_cache[slot].type = tp;
    t->enc_cache[slot].spec = &t->enc[PyLong_AsSsize_t(idx)];
    return t->enc_cache[slot].spec;
}

/* One open list, tuple or dict while its elements are written. */
typedef struct {
    PyObject *seq;       /* owned */
    Py_ssize_t i;        /* next index, or PyDict_Next position */
    PyObject *pending;   /* dict: value to write after its key (owned), else NULL */
} EFrame;

/* Write one value; a container writes its header and count and is pushed on the stack.
 * Returns 0, or -1 to bail. */
static int write_value(Out *o, Table *t, PyObject *v, EFrame **frames, EFrame *local,
                       Py_ssize_t *depth, Py_ssize_t *cap, Py_ssize_t limit)
{
    const Spec *s = enc_spec(t, Py_TYPE(v));
    if (s == NULL)  /* a class the C path does not handle: Python raises or writes it */
        return -1;
    switch (s->kind) {
    case K_EMPTY:
        return out_u32(o, s->header);
    case K_BOOL:
        return (out_u32(o, s->header) < 0 || out_u32(o, v == Py_True)) ? -1 : 0;
    case K_NUMBER:
        return write_number(o, s, v);
    case K_STRING:
        return (out_u32(o, s->header) < 0) ? -1 : out_text(o, v, 0);
    case K_STRUCT:
        return write_struct(o, s, v);
    case K_PACKED_BYTES:
        return write_packed_bytes(o, s, v);
    case K_PACKED_STRINGS:
        return PyTuple_Check(v) ? write_packed_strings(o, s, v) : -1;
    case K_PACKED:
        return write_packed(o, t, s, v);
    case K_OBJECT:
    case K_ID64:
        return write_id(o, s, v);
    case K_CONTAINER: {
        Py_ssize_t n;
        if (s->pairs ? !PyDict_Check(v) : !(PyList_Check(v) || PyTuple_Check(v)))
            return -1;
        n = PyObject_Length(v);
        /* an element below `limit` open containers: the engine refuses it (Python raises); a value holding
         * itself would otherwise be written until memory runs out */
        if (n < 0 || n > UINT32_MAX || (n > 0 && limit >= 0 && *depth >= limit) || out_u32(o, s->header) < 0
                || out_u32(o, (uint32_t)n) < 0)
            return -1;
        /* room for the elements up front (8 bytes each, the size of a small number) rather than
         * repeated doublings; the final resize gives back what is not used */
        if (n > 0 && out_reserve(o, n < PY_SSIZE_T_MAX / 16 ? n * 8 : n) < 0)
            return -1;
        if (*depth == *cap) {
            EFrame *nf = grow_stack(*frames, local, cap, sizeof(EFrame));
            if (nf == NULL)
                return -1;
            *frames = nf;
        }
        Py_INCREF(v);
        (*frames)[*depth].seq = v;
        (*frames)[*depth].i = 0;
        (*frames)[*depth].pending = NULL;
        (*depth)++;
        return 0;
    }
    }
    return -1;
}

/* An exact int of at most two digits read straight from its digits (3.11 layout); -1 for the
 * others (and on other versions), which PyLong_AsLongLongAndOverflow then reads. */
static inline int small_long(PyObject *x, long long *v)
{
#if PY_VERSION_HEX < 0x030C0000
    Py_ssize_t size = Py_SIZE(x);
    const digit *d = ((PyLongObject *)x)->ob_digit;
    switch (size) {
    case 0: *v = 0; return 0;
    case 1: *v = (long long)d[0]; return 0;
    case -1: *v = -(long long)d[0]; return 0;
    case 2: *v = (long long)d[0] | (long long)d[1] << PyLong_SHIFT; return 0;
    case -2: *v = -((long long)d[0] | (long long)d[1] << PyLong_SHIFT); return 0;
    }
#endif
    return -1;
}

/* A run of exact ints in a list (Array of ints), written without a trip through write_value: the
 * same choice as write_number (narrow when it holds the value, else wide), and it stops at the
 * first item that is not an exact int or does not fit the wide form (the general path decides). */
static int write_int_run(Out *o, Table *t, EFrame *f)
{
    const Spec *s = enc_spec(t, &PyLong_Type);
    PyObject *const *items = ((PyListObject *)f->seq)->ob_item;
    Py_ssize_t i = f->i, n = PyList_GET_SIZE(f->seq);
    uint32_t narrow, wide;
    unsigned char *w, *end;
    if (s == NULL || s->kind != K_NUMBER || s->narrow != S_I32 || s->wide != S_I64 || s->obj != NULL)
        return 0;
    if (n - i <= 0)
        return 0;
    /* 8 bytes an item (the narrow form; the container already asked for that much), more when a
     * wide one comes: a second, bigger buffer would mean another copy and more fresh pages */
    if (n - i > PY_SSIZE_T_MAX / 16 || out_reserve(o, (n - i) * 8) < 0)
        return -1;
    /* Room for every item is reserved and nothing below calls back into Python, so the list cannot
     * change and its items stay alive.  Locals, not o->len / f->i: byte stores may alias anything,
     * which would make the compiler reload those after every store. */
    narrow = s->header;
    wide = s->wide_header;
    w = o->p + o->len;
    end = o->p + o->cap;
    for (; i < n; i++) {
        PyObject *x = items[i];
        long long v;
#if defined(__GNUC__)
        if (i + 16 < n)  /* the int objects are scattered: ask for one a few items ahead */
            __builtin_prefetch(items[i + 16]);
#endif
        if (!PyLong_CheckExact(x))
            break;
        if (small_long(x, &v) < 0) {
            int overflow = 0;
            v = PyLong_AsLongLongAndOverflow(x, &overflow);
            if (overflow || (v == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                break;
            }
        }
        if (end - w < 12) {
            o->len = w - o->p;
            if (out_reserve(o, 12 + (n - i) * 8) < 0)
                return -1;
            w = o->p + o->len;
            end = o->p + o->cap;
        }
        if (v >= INT32_MIN && v <= INT32_MAX) {
            st_u32(w, narrow);
            st_u32(w + 4, (uint32_t)(int32_t)v);
            w += 8;
        } else {
            st_u32(w, wide);
            st_u64(w + 4, (uint64_t)v);
            w += 12;
        }
    }
    o->len = w - o->p;
    f->i = i;
    return 0;
}

/* Encode value; *levels: the deepest nesting of containers written (the top container is level 1).
 * limit >= 0: None (Python raises) when a container below `limit` open containers holds an element, the
 * engine's depth limit, as encoder.py's walker refuses it. bytes | None */
static PyObject *encode_levels(Table *self, PyObject *value, Py_ssize_t limit, Py_ssize_t *levels)
{
    EFrame local[64], *frames = local;
    Py_ssize_t depth = 0, cap = 64, deepest = 0;
    Out o;
    PyObject *item = value;
    Py_INCREF(item);
    if ((o.bytes = PyBytes_FromStringAndSize(NULL, 256)) == NULL)
        goto bail;
    o.p = (unsigned char *)PyBytes_AS_STRING(o.bytes);
    o.len = 0;
    o.cap = 256;
    for (;;) {
        int rc = write_value(&o, self, item, &frames, local, &depth, &cap, limit);
        Py_DECREF(item);
        item = NULL;
        if (rc < 0)
            goto bail;
        if (depth > deepest)
            deepest = depth;
        /* find the next value to write, closing finished containers */
        while (depth > 0) {
            EFrame *f = &frames[depth - 1];
            if (f->pending != NULL) {
                item = f->pending;
                f->pending = NULL;
                break;
            }
            if (PyDict_Check(f->seq)) {
                PyObject *k, *v;
                if (PyDict_Next(f->seq, &f->i, &k, &v)) {
                    Py_INCREF(k);
                    Py_INCREF(v);
                    item = k;
                    f->pending = v;
                    break;
                }
            } else {
                if (PyList_CheckExact(f->seq) && write_int_run(&o, self, f) < 0)
                    goto bail;
                if (f->i < Py_SIZE(f->seq)) {
                    item = PyList_Check(f->seq) ? PyList_GET_ITEM(f->seq, f->i) : PyTuple_GET_ITEM(f->seq, f->i);
                    Py_INCREF(item);
                    f->i++;
                    break;
                }
            }
            Py_DECREF(f->seq);
            depth--;
        }
        if (item == NULL)
            break;
    }
    if (frames != local)
        PyMem_Free(frames);
    if (_PyBytes_Resize(&o.bytes, o.len) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    *levels = deepest;
    return o.bytes;
bail:
    Py_XDECREF(item);
    while (depth > 0) {
        depth--;
        Py_DECREF(frames[depth].seq);
        Py_XDECREF(frames[depth].pending);
    }
    if (frames != local)
        PyMem_Free(frames);
    Py_XDECREF(o.bytes);
    PyErr_Clear();
    Py_RETURN_NONE;
}

/* Table.encode(value) -> bytes | None */
static PyObject *Table_encode(Table *self, PyObject *value)
{
    Py_ssize_t levels;
    return encode_levels(self, value, -1, &levels);
}

/* Table.encode_levels(value, limit=-1) -> (bytes, levels) | None */
static PyObject *Table_encode_levels(Table *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t levels = 0, limit = -1;
    PyObject *out, *res;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "encode_levels(value, limit=-1)");
        return NULL;
    }
    if (nargs == 2 && (limit = PyLong_AsSsize_t(args[1])) == -1 && PyErr_Occurred())
        return NULL;
    out = encode_levels(self, args[0], limit, &levels);
    if (out == NULL || out == Py_None)
        return out;
    res = Py_BuildValue("(Nn)", out, levels);
    return res;
}

/* ---------------------------------------------------------------------------------------------
 * Table construction: parse the entry tuples fast.py builds from the spec.
 * ------------------------------------------------------------------------------------------- */
static int scalar_code(const char *c)
{
    if (c[0] == 0)
        return S_NONE;
    if (c[1] == 0) {
        switch (c[0]) {
        case 'i': return S_I32;
        case 'I': return S_U32;
        case 'q': return S_I64;
        case 'Q': return S_U64;
        case 'f': return S_F32;
        case 'd': return S_F64;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown scalar code %s", c);
    return -1;
}

static int set_obj(PyObject **slot, PyObject *v)
{
    if (v == Py_None)
        v = NULL;
    Py_XINCREF(v);
    *slot = v;
    return 0;
}

static int parse_scalars(Spec *s, const char *narrow, const char *wide)
{
    if ((s->narrow = scalar_code(narrow)) < 0 || (s->wide = scalar_code(wide)) < 0)
        return -1;
    if (s->narrow == S_NONE) {
        PyErr_SetString(PyExc_ValueError, "a narrow scalar is required");
        return -1;
    }
    return 0;
}

/* Validates a plan and counts its leaves (shared with _render.c). */
int plan_leaves(PyObject *plan, Py_ssize_t *leaves)
{
    unsigned char seen[MAX_LEAVES] = {0};
    Py_ssize_t i;
    *leaves = 0;
    if (check_plan(plan, 0, seen, leaves) < 0)
        return -1;
    for (i = 0; i < *leaves; i++)
        if (!seen[i]) {
            PyErr_SetString(PyExc_ValueError, "struct plan leaves must be 0..n-1");
            return -1;
        }
    return 0;
}

static int parse_plan(Spec *s, PyObject *plan)
{
    if (plan_leaves(plan, &s->n) < 0)
        return -1;
    return set_obj(&s->obj, plan);
}

/* Decoder entry for one type id: (kind, per-kind fields...), see fast.py. */
static int parse_dec(Spec *s, PyObject *e)
{
    const char *narrow, *wide;
    PyObject *a = NULL, *b = NULL;
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) < 1 || !PyLong_Check(PyTuple_GET_ITEM(e, 0))) {
        PyErr_SetString(PyExc_TypeError, "decoder entry must be (kind, ...)");
        return -1;
    }
    s->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
    switch (s->kind) {
    case K_EMPTY:
        if (!PyArg_ParseTuple(e, "iO", &s->kind, &a))
            return -1;
        Py_INCREF(a);  /* None is a real constant here */
        s->obj = a;
        return 0;
    case K_BOOL:
    case K_PACKED_BYTES:
        return PyArg_ParseTuple(e, "i", &s->kind) ? 0 : -1;
    case K_NUMBER:
        if (!PyArg_ParseTuple(e, "issIOO", &s->kind, &narrow, &wide, &s->wide_mask, &a, &b)
            || parse_scalars(s, narrow, wide) < 0)
            return -1;
        set_obj(&s->obj, a);
        return set_obj(&s->obj2, b);
    case K_STRING:
        if (!PyArg_ParseTuple(e, "iO", &s->kind, &a))
            return -1;
        return set_obj(&s->obj, a);
    case K_STRUCT:
        if (!PyArg_ParseTuple(e, "issIO", &s->kind, &narrow, &wide, &s->wide_mask, &a)
            || parse_scalars(s, narrow, wide) < 0)
            return -1;
        return parse_plan(s, a);
    case K_PACKED:
        if (!PyArg_ParseTuple(e, "iUUInnO", &s->kind, &a, &b, &s->wide_mask, &s->n, &s->stride,
                              &s->obj)
            || parse_scalars(s, PyUnicode_AsUTF8(a), PyUnicode_AsUTF8(b)) < 0)
            return -1;
        if (s->n < 1 || s->n > MAX_LEAVES || s->stride < 1 || s->stride > 8 * MAX_LEAVES) {
            PyErr_SetString(PyExc_ValueError, "packed width or stride out of range");
            return -1;
        }
        Py_INCREF(s->obj);
        set_obj(&s->tc, a);
        return set_obj(&s->tc2, b);
    case K_PACKED_STRINGS:
    case K_ID64:
        if (!PyArg_ParseTuple(e, "iO", &s->kind, &s->obj))
            return -1;
        Py_INCREF(s->obj);
        s->direct = s->kind == K_PACKED_STRINGS && plain_tuple_class(s->obj);
        return 0;
    case K_CONTAINER:
        return PyArg_ParseTuple(e, "ipII", &s->kind, &s->pairs, &s->aux_mask, &s->count_mask) ? 0 : -1;
    case K_OBJECT:
        if (!PyArg_ParseTuple(e, "iIO", &s->kind, &s->aux_mask, &s->obj))
            return -1;
        Py_INCREF(s->obj);
        return 0;
    }
    s->kind = K_BAIL;  /* a layout kind this file does not know: always bail */
    return 0;
}

/* Encoder entry for one Python class: (kind, header, per-kind fields...), see fast.py. */
static int parse_enc(Spec *s, PyObject *e)
{
    const char *narrow, *wide;
    PyObject *a = NULL, *b = NULL;
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) < 2 || !PyLong_Check(PyTuple_GET_ITEM(e, 0))) {
        PyErr_SetString(PyExc_TypeError, "encoder entry must be (kind, header, ...)");
        return -1;
    }
    s->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
    switch (s->kind) {
    case K_EMPTY:
    case K_BOOL:
    case K_STRING:
    case K_PACKED_BYTES:
    case K_PACKED_STRINGS:
        return PyArg_ParseTuple(e, "iI", &s->kind, &s->header) ? 0 : -1;
    case K_NUMBER:
        if (!PyArg_ParseTuple(e, "iIIssOO", &s->kind, &s->header, &s->wide_header, &narrow, &wide,
                              &a, &b)
            || parse_scalars(s, narrow, wide) < 0)
            return -1;
        if (s->wide == S_NONE) {
            PyErr_SetString(PyExc_ValueError, "number needs a wide scalar");
            return -1;
        }
        set_obj(&s->obj, a);
        return set_obj(&s->obj2, b);
    case K_STRUCT:
        if (!PyArg_ParseTuple(e, "iIsO", &s->kind, &s->header, &narrow, &a)
            || parse_scalars(s, narrow, "") < 0)
            return -1;
        return parse_plan(s, a);
    case K_PACKED:
        if (!PyArg_ParseTuple(e, "iIsn", &s->kind, &s->header, &narrow, &s->n)
            || parse_scalars(s, narrow, "") < 0)
            return -1;
        if (s->n < 1 || s->n > MAX_LEAVES) {
            PyErr_SetString(PyExc_ValueError, "packed width out of range");
            return -1;
        }
        return 0;
    case K_CONTAINER:
        return PyArg_ParseTuple(e, "iIp", &s->kind, &s->header, &s->pairs) ? 0 : -1;
    case K_OBJECT:
    case K_ID64:
        if (!PyArg_ParseTuple(e, "iIn", &s->kind, &s->header, &s->n))
            return -1;
        if (s->n < 0) {
            PyErr_SetString(PyExc_ValueError, "field index must be >= 0");
            return -1;
        }
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "encoder entry of unknown kind %d", s->kind);
    return -1;
}

static void free_specs(Spec *specs, Py_ssize_t n)
{
    Py_ssize_t i;
    if (specs == NULL)
        return;
    for (i = 0; i < n; i++) {
        Py_XDECREF(specs[i].obj);
        Py_XDECREF(specs[i].obj2);
        Py_XDECREF(specs[i].tc);
        Py_XDECREF(specs[i].tc2);
    }
    PyMem_Free(specs);
}

static void Table_dealloc(Table *self)
{
    Py_ssize_t i;
    for (i = 0; i < STR_CACHE; i++)
        Py_XDECREF(self->str_cache[i]);
    free_specs(self->dec, self->ndec);
    free_specs(self->enc, self->nenc);
    Py_XDECREF(self->enc_index);
    Py_XDECREF(self->freeze);
    Py_XDECREF(self->array_type);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Table(decoders: tuple, encoders: dict[type, tuple], type_mask: int, freeze, array_type, key_hash_limit: int) */
static PyObject *Table_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"decoders", "encoders", "type_mask", "freeze", "array_type", "key_hash_limit", NULL};
    PyObject *decoders, *encoders, *freeze, *array_type, *k, *v;
    unsigned int type_mask;
    Py_ssize_t i, pos = 0, key_hash_limit;
    Table *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!IOO!n", kwlist, &PyTuple_Type, &decoders,
                                     &PyDict_Type, &encoders, &type_mask, &freeze, &PyType_Type,
                                     &array_type, &key_hash_limit))
        return NULL;
    if ((self = (Table *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    self->type_mask = type_mask;
    self->key_hash_limit = key_hash_limit;
    Py_INCREF(freeze);
    self->freeze = freeze;
    Py_INCREF(array_type);
    self->array_type = array_type;
    self->ndec = PyTuple_GET_SIZE(decoders);
    self->dec = PyMem_Calloc((size_t)self->ndec + 1, sizeof(Spec));
    self->nenc = PyDict_GET_SIZE(encoders);
    self->enc = PyMem_Calloc((size_t)self->nenc + 1, sizeof(Spec));
    self->enc_index = PyDict_New();
    if (self->dec == NULL || self->enc == NULL || self->enc_index == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (i = 0; i < self->ndec; i++)
        if (parse_dec(&self->dec[i], PyTuple_GET_ITEM(decoders, i)) < 0)
            goto fail;
    for (i = 0; PyDict_Next(encoders, &pos, &k, &v); i++) {
        PyObject *idx;
        int rc;
        if (!PyType_Check(k)) {
            PyErr_SetString(PyExc_TypeError, "encoder keys must be classes");
            goto fail;
        }
        if (parse_enc(&self->enc[i], v) < 0 || (idx = PyLong_FromSsize_t(i)) == NULL)
            goto fail;
        rc = PyDict_SetItem(self->enc_index, k, idx);
        Py_DECREF(idx);
        if (rc < 0)
            goto fail;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static PyMethodDef Table_methods[] = {
    {"decode", (PyCFunction)(void (*)(void))Table_decode, METH_FASTCALL,
     "decode(data, allow_objects, max_depth, offset, end) -> (value, bytes_used), or None to "
     "let the pure-Python decoder do it"},
    {"encode", (PyCFunction)Table_encode, METH_O,
     "encode(value) -> bytes, or None to let the pure-Python encoder do it"},
    {"encode_levels", (PyCFunction)(void (*)(void))Table_encode_levels, METH_FASTCALL,
     "encode_levels(value, limit=-1) -> (bytes, deepest container nesting), or None as encode (and when a "
     "container below `limit` levels holds an element)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_dissect.codec._speedups.Table",
    .tp_doc = "One dialect's codec tables, compiled by godot_dissect.codec.fast from the spec.",
    .tp_basicsize = sizeof(Table),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Table_new,
    .tp_dealloc = (destructor)Table_dealloc,
    .tp_methods = Table_methods,
};

/* The value of a whole message body decoded by a Table (what Table.decode(data, True, max_depth, 0,
 * None)[0] gives), a new reference; NULL to bail, no exception set (not a Table, or the decoder left
 * the body to Python: malformed, too deep, an Object ...).  For _render.c's record lines. */
PyObject *codec_decode_body(PyObject *table, PyObject *data, long long max_depth)
{
    Py_ssize_t used = 0;
    PyObject *value;
    if (!Py_IS_TYPE(table, &TableType))
        return NULL;
    value = table_decode((Table *)table, data, max_depth, 0, -1, &used);
    if (value == NULL)
        PyErr_Clear();
    return value;
}

/* ---------------------------------------------------------------------------------------------
 * The front door: codec.decoder.decode as one C call.  decode(data, dialect, *, allow_objects,
 * max_depth) of a whole buffer goes straight to the dialect's Table when fast.py already has one
 * for that dialect argument and its switch (fast.fast_decode_prefix) is on; anything else (other
 * argument shapes, an unknown dialect, a bail) is handed, arguments untouched, to the Python
 * decode it wraps, which raises, builds the table or decodes (C again, then pure).
 * ------------------------------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *python;      /* the Python decode (also __wrapped__: its signature and docs) */
    PyObject *tables;      /* dict: dialect argument -> Table (fast.py fills it) */
    PyObject *switches;    /* fast.py's module dict */
    PyObject *switch_key;  /* the name in it that is None when the C path is off */
    PyObject *dialect;     /* the Python decode's defaults */
    PyObject *max_depth;
    PyObject *reduce;      /* what pickle gets: finds the module attribute again */
} FrontDoor;

static PyTypeObject FrontDoorType;

static PyObject *FrontDoor_vectorcall(FrontDoor *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, i, used;
    PyObject *dialect = self->dialect, *md = self->max_depth, *t, *sw, *value;
    long long max_depth;
    if (nargs < 1 || nargs > 2)
        goto python;
    if (nargs == 2)
        dialect = args[1];
    for (i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        if (nargs < 2 && PyUnicode_CompareWithASCIIString(k, "dialect") == 0)
            dialect = args[nargs + i];
        else if (PyUnicode_CompareWithASCIIString(k, "max_depth") == 0)
            md = args[nargs + i];
        else if (PyUnicode_CompareWithASCIIString(k, "allow_objects") != 0)  /* full Objects bail anyway */
            goto python;
    }
    if (!PyUnicode_CheckExact(dialect) || !PyLong_CheckExact(md))
        goto python;
    sw = PyDict_GetItemWithError(self->switches, self->switch_key);
    if (sw == NULL || sw == Py_None)
        goto python;
    t = PyDict_GetItemWithError(self->tables, dialect);
    if (t == NULL || !Py_IS_TYPE(t, &TableType))
        goto python;
    max_depth = PyLong_AsLongLong(md);
    if (max_depth == -1 && PyErr_Occurred())
        goto python;
    if ((value = table_decode((Table *)t, args[0], max_depth, 0, -1, &used)) != NULL)
        return value;
python:
    PyErr_Clear();
    return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
}

static PyObject *FrontDoor_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"python", "tables", "switches", "switch_key", "dialect", "max_depth", "reduce", NULL};
    PyObject *python, *tables, *switches, *key, *dialect, *md, *reduce;
    FrontDoor *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!O!UOO!O!", kwlist, &python, &PyDict_Type, &tables,
                                     &PyDict_Type, &switches, &key, &dialect, &PyLong_Type, &md, &PyTuple_Type,
                                     &reduce))
        return NULL;
    if ((self = (FrontDoor *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)FrontDoor_vectorcall;
    Py_INCREF(python);
    self->python = python;
    Py_INCREF(tables);
    self->tables = tables;
    Py_INCREF(switches);
    self->switches = switches;
    Py_INCREF(key);
    self->switch_key = key;
    Py_INCREF(dialect);
    self->dialect = dialect;
    Py_INCREF(md);
    self->max_depth = md;
    Py_INCREF(reduce);
    self->reduce = reduce;
    return (PyObject *)self;
}

static void FrontDoor_dealloc(FrontDoor *self)
{
    Py_XDECREF(self->python);
    Py_XDECREF(self->tables);
    Py_XDECREF(self->switches);
    Py_XDECREF(self->switch_key);
    Py_XDECREF(self->dialect);
    Py_XDECREF(self->max_depth);
    Py_XDECREF(self->reduce);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *FrontDoor_reduce(FrontDoor *self, PyObject *unused)
{
    Py_INCREF(self->reduce);
    return self->reduce;
}

static PyMethodDef FrontDoor_methods[] = {
    {"__reduce__", (PyCFunction)FrontDoor_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyObject *FrontDoor_doc(FrontDoor *self, void *closure)
{
    return PyObject_GetAttrString(self->python, "__doc__");
}

static PyMemberDef FrontDoor_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(FrontDoor, python), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef FrontDoor_getset[] = {
    {"__doc__", (getter)FrontDoor_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FrontDoorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_dissect.codec._speedups.FrontDoor",
    .tp_basicsize = sizeof(FrontDoor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(FrontDoor, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = FrontDoor_new,
    .tp_dealloc = (destructor)FrontDoor_dealloc,
    .tp_members = FrontDoor_members,
    .tp_methods = FrontDoor_methods,
    .tp_getset = FrontDoor_getset,
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godot_dissect.codec._speedups",
    .m_doc = "Compiled hot path of the Variant codec; driven by tables from godot_dissect.codec.fast.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyObject *m, *kinds;
    int i;
    if (PyType_Ready(&TableType) < 0 || PyType_Ready(&FrontDoorType) < 0)
        return NULL;
    if ((str_array = PyUnicode_InternFromString("array")) == NULL)
        return NULL;
    if ((m = PyModule_Create(&speedups_module)) == NULL)
        return NULL;
    if ((kinds = PyTuple_New(K_COUNT)) == NULL)
        goto fail;
    for (i = 0; i < K_COUNT; i++) {
        PyObject *s = PyUnicode_FromString(KIND_NAMES[i]);
        if (s == NULL) {
            Py_DECREF(kinds);
            goto fail;
        }
        PyTuple_SET_ITEM(kinds, i, s);
    }
    if (PyModule_AddObject(m, "KINDS", kinds) < 0) {
        Py_DECREF(kinds);
        goto fail;
    }
    Py_INCREF(&TableType);
    if (PyModule_AddObject(m, "Table", (PyObject *)&TableType) < 0) {
        Py_DECREF(&TableType);
        goto fail;
    }
    Py_INCREF(&FrontDoorType);
    if (PyModule_AddObject(m, "FrontDoor", (PyObject *)&FrontDoorType) < 0) {
        Py_DECREF(&FrontDoorType);
        goto fail;
    }
    if (render_init(m) < 0)  /* TextWriter, JsonWriter: _render.c */
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
