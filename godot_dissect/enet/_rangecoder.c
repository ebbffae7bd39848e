/* ENet's range coder decompressor (thirdparty/enet/compress.c), the compiled path of
 * godot_dissect/enet/rangecoder.py: the same state, the same model updates, the same errors at the
 * same offsets (the pure module is the reference; tests/test_enet_rangecoder.py compares them on real
 * compressed captures and random inputs). Integer widths follow the Python port, which follows the C
 * code: u32 coder state, u16 context fields, u8 counts and values.
 *
 * decompress(data: bytes, limit: int) -> bytes | (offset, reason)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define TOP (1u << 24)
#define BOTTOM (1u << 16)
#define CONTEXT_SYMBOL_DELTA 3
#define CONTEXT_SYMBOL_MINIMUM 1
#define CONTEXT_ESCAPE_MINIMUM 1
#define SUBCONTEXT_ORDER 2
#define SUBCONTEXT_SYMBOL_DELTA 2
#define SUBCONTEXT_ESCAPE_DELTA 5
#define SYMBOL_CAPACITY 4096
#define MAX_NORMALISE 64
#define PREDICTED (-1)
#define M16 0xFFFF

typedef struct {
    int value[SYMBOL_CAPACITY], count[SYMBOL_CAPACITY], under[SYMBOL_CAPACITY];
    int left[SYMBOL_CAPACITY], right[SYMBOL_CAPACITY], symbols[SYMBOL_CAPACITY];
    int escapes[SYMBOL_CAPACITY], total[SYMBOL_CAPACITY], parent[SYMBOL_CAPACITY];
    int next;
    /* the coder */
    const unsigned char *data;
    Py_ssize_t pos, end;
    uint32_t low, code, range;
    /* an error: its offset and reason (reason NULL: none) */
    Py_ssize_t err_pos;
    const char *err;
    char err_buf[96];
    int stack_node[SYMBOL_CAPACITY], stack_total[SYMBOL_CAPACITY];
} Coder;

static int fail(Coder *c, const char *reason)
{
    if (c->err == NULL) {
        c->err = reason;
        c->err_pos = c->pos;
    }
    return -1;
}

static int create(Coder *c, int value, int count)
{
    int i = c->next;
    if (i >= SYMBOL_CAPACITY) {
        /* (the pure module raises at offset 0 here) */
        if (c->err == NULL) {
            c->err = "symbol table overflow";
            c->err_pos = 0;
        }
        return -1;
    }
    c->next = i + 1;
    c->value[i] = value & 0xFF;
    c->count[i] = count & 0xFF;
    c->under[i] = count & M16;
    c->left[i] = c->right[i] = c->symbols[i] = c->escapes[i] = c->total[i] = c->parent[i] = 0;
    return i;
}

static int create_context(Coder *c, int escapes, int minimum)
{
    int i = create(c, 0, 0);
    if (i < 0)
        return -1;
    c->escapes[i] = escapes;
    c->total[i] = (escapes + 256 * minimum) & M16;
    c->symbols[i] = 0;
    return i;
}

/* enet_symbol_rescale, iterative (as the pure port) */
static int rescale_tree(Coder *c, int start)
{
    int depth = 0, node = start, total = 0;
    for (;;) {
        c->count[node] -= c->count[node] >> 1;
        c->under[node] = c->count[node];
        if (c->left[node]) {
            if (depth >= SYMBOL_CAPACITY)
                return fail(c, "symbol tree deeper than the symbol table");
            c->stack_node[depth] = node;
            c->stack_total[depth++] = total;
            node += c->left[node];
            total = 0;
            continue;
        }
        for (;;) {
            total = (total + c->under[node]) & M16;
            if (c->right[node]) {
                node += c->right[node];
                break;
            }
            if (depth == 0)
                return total;
            depth--;
            node = c->stack_node[depth];
            c->under[node] = (c->under[node] + total) & M16;
            total = c->stack_total[depth];
        }
    }
}

static int rescale(Coder *c, int ctx, int minimum)
{
    int t = 0;
    if (c->symbols[ctx]) {
        t = rescale_tree(c, ctx + c->symbols[ctx]);
        if (t < 0)
            return -1;
    }
    c->total[ctx] = t;
    c->escapes[ctx] -= c->escapes[ctx] >> 1;
    c->total[ctx] = (c->total[ctx] + c->escapes[ctx] + 256 * minimum) & M16;
    return 0;
}

/* ENET_CONTEXT_ENCODE: find or add value; sets *under, *count; returns the symbol or -1 */
static int encode_symbol(Coder *c, int ctx, int value, int update, int minimum, int *count_out)
{
    int count_ = minimum, s, node;
    if (!c->symbols[ctx]) {
        s = create(c, value, update);
        if (s < 0)
            return -1;
        c->symbols[ctx] = s - ctx;
        *count_out = count_;
        return s;
    }
    node = ctx + c->symbols[ctx];
    for (;;) {
        int nv = c->value[node];
        if (value < nv) {
            c->under[node] = (c->under[node] + update) & M16;
            if (c->left[node]) {
                node += c->left[node];
                continue;
            }
            s = create(c, value, update);
            if (s < 0)
                return -1;
            c->left[node] = s - node;
        } else if (value > nv) {
            if (c->right[node]) {
                node += c->right[node];
                continue;
            }
            s = create(c, value, update);
            if (s < 0)
                return -1;
            c->right[node] = s - node;
        } else {
            count_ += c->count[node];
            c->under[node] = (c->under[node] + update) & M16;
            c->count[node] = (c->count[node] + update) & 0xFF;
            s = node;
        }
        *count_out = count_ & M16;
        return s;
    }
}

static int coder_read(Coder *c, int total, int *code)
{
    if (total == 0)
        return fail(c, "coder range collapsed to 0 (ENet would divide by zero)");
    c->range /= (uint32_t)total;
    if (c->range == 0)
        return fail(c, "coder range collapsed to 0 (ENet would divide by zero)");
    *code = (int)(((uint32_t)(c->code - c->low) / c->range) & M16);
    return 0;
}

static int coder_decode(Coder *c, int under, int count)
{
    int i;
    c->low = c->low + (uint32_t)under * c->range;
    c->range = c->range * (uint32_t)count;
    for (i = 0; i < MAX_NORMALISE; i++) {
        if (c->range == 0)
            break;
        if ((c->low ^ (c->low + c->range)) >= TOP) {
            if (c->range >= BOTTOM)
                return 0;
            c->range = (0u - c->low) & (BOTTOM - 1);
        }
        c->code <<= 8;
        if (c->pos < c->end)
            c->code |= c->data[c->pos++];
        c->range <<= 8;
        c->low <<= 8;
    }
    return fail(c, "coder range degenerate (ENet would loop forever)");
}

/* ENET_CONTEXT_TRY_DECODE (minimum 0) */
static int try_decode(Coder *c, int ctx, int code, int *value, int *under, int *count)
{
    int under_ = 0, node;
    if (!c->symbols[ctx])
        return fail(c, "code in an empty context");
    node = ctx + c->symbols[ctx];
    for (;;) {
        int after = (under_ + c->under[node]) & M16;
        int before = c->count[node];
        if (code >= after) {
            under_ = (under_ + c->under[node]) & M16;
            if (c->right[node]) {
                node += c->right[node];
                continue;
            }
            return fail(c, "code past the last symbol of a context");
        }
        if (code < after - before) {
            c->under[node] = (c->under[node] + SUBCONTEXT_SYMBOL_DELTA) & M16;
            if (c->left[node]) {
                node += c->left[node];
                continue;
            }
            return fail(c, "code before the first symbol of a context");
        }
        c->under[node] = (c->under[node] + SUBCONTEXT_SYMBOL_DELTA) & M16;
        *count = c->count[node];
        c->count[node] = (c->count[node] + SUBCONTEXT_SYMBOL_DELTA) & 0xFF;
        *value = c->value[node];
        *under = (after - before) & M16;
        return node;
    }
}

/* ENET_CONTEXT_ROOT_DECODE (minimum 1) */
static int root_decode(Coder *c, int ctx, int code, int *value, int *under, int *count)
{
    const int minimum = CONTEXT_SYMBOL_MINIMUM, update = CONTEXT_SYMBOL_DELTA;
    int under_ = 0, node, s;
    if (!c->symbols[ctx]) {
        *value = (code / minimum) & 0xFF;
        under_ = code - code % minimum;
        s = create(c, *value, update);
        if (s < 0)
            return -1;
        c->symbols[ctx] = s - ctx;
        *under = under_ & M16;
        *count = minimum;
        return s;
    }
    node = ctx + c->symbols[ctx];
    for (;;) {
        int after = (under_ + c->under[node] + (c->value[node] + 1) * minimum) & M16;
        int before = (c->count[node] + minimum) & M16;
        if (code >= after) {
            under_ = (under_ + c->under[node]) & M16;
            if (c->right[node]) {
                node += c->right[node];
                continue;
            }
            *value = (c->value[node] + 1 + (code - after) / minimum) & 0xFF;
            under_ = code - (code - after) % minimum;
            s = create(c, *value, update);
            if (s < 0)
                return -1;
            c->right[node] = s - node;
            *under = under_ & M16;
            *count = minimum;
            return s;
        }
        if (code < after - before) {
            c->under[node] = (c->under[node] + update) & M16;
            if (c->left[node]) {
                node += c->left[node];
                continue;
            }
            *value = (c->value[node] - 1 - (after - before - code - 1) / minimum) & 0xFF;
            under_ = code - (after - before - code - 1) % minimum;
            s = create(c, *value, update);
            if (s < 0)
                return -1;
            c->left[node] = s - node;
            *under = under_ & M16;
            *count = minimum;
            return s;
        }
        *count = (minimum + c->count[node]) & M16;
        c->under[node] = (c->under[node] + update) & M16;
        c->count[node] = (c->count[node] + update) & 0xFF;
        *value = c->value[node];
        *under = (after - before) & M16;
        return node;
    }
}

/* the decompression loop; output into *out (capacity *cap, grown up to limit bytes: a caller's limit may be
 * far more than the input decodes to); returns its length or -1 (c->err unset: out of memory) */
static Py_ssize_t run(Coder *c, unsigned char **out, Py_ssize_t *cap, Py_ssize_t limit)
{
    Py_ssize_t n = 0;
    int shift, root, predicted = 0, order = 0;
    c->low = 0;
    c->code = 0;
    c->range = 0xFFFFFFFFu;
    for (shift = 24; shift >= 0; shift -= 8)
        if (c->pos < c->end)
            c->code |= (uint32_t)c->data[c->pos++] << shift;
    root = create_context(c, CONTEXT_ESCAPE_MINIMUM, CONTEXT_SYMBOL_MINIMUM);
    if (root < 0)
        return -1;
    for (;;) {
        int value = 0, parent_ref = PREDICTED, sub = predicted, found = 0;
        int bottom = 0, under, count, code, symbol, patch;
        while (sub != root) {
            int esc = c->escapes[sub], total;
            if (esc <= 0) {
                sub = c->parent[sub];
                continue;
            }
            total = c->total[sub];
            if (esc >= total) {
                sub = c->parent[sub];
                continue;
            }
            if (coder_read(c, total, &code) < 0)
                return -1;
            if (code < esc) {
                if (coder_decode(c, 0, esc) < 0)
                    return -1;
                sub = c->parent[sub];
                continue;
            }
            code -= esc;
            symbol = try_decode(c, sub, code, &value, &under, &count);
            if (symbol < 0)
                return -1;
            bottom = symbol;
            if (coder_decode(c, (esc + under) & M16, count) < 0)
                return -1;
            c->total[sub] = (c->total[sub] + SUBCONTEXT_SYMBOL_DELTA) & M16;
            if (count > 0xFF - 2 * SUBCONTEXT_SYMBOL_DELTA || c->total[sub] > (int)BOTTOM - 0x100)
                if (rescale(c, sub, 0) < 0)
                    return -1;
            found = 1;
            break;
        }
        if (!found) {
            int total = c->total[root], esc;
            if (coder_read(c, total, &code) < 0)
                return -1;
            esc = c->escapes[root];
            if (code < esc) {
                if (coder_decode(c, 0, esc) < 0)
                    return -1;
                break; /* end of stream */
            }
            code -= esc;
            symbol = root_decode(c, root, code, &value, &under, &count);
            if (symbol < 0)
                return -1;
            bottom = symbol;
            if (coder_decode(c, (esc + under) & M16, count) < 0)
                return -1;
            c->total[root] = (c->total[root] + CONTEXT_SYMBOL_DELTA) & M16;
            if (count > 0xFF - 2 * CONTEXT_SYMBOL_DELTA + CONTEXT_SYMBOL_MINIMUM
                || c->total[root] > (int)BOTTOM - 0x100)
                if (rescale(c, root, CONTEXT_SYMBOL_MINIMUM) < 0)
                    return -1;
        }
        /* patchContexts: teach the skipped lower-order contexts the symbol */
        patch = predicted;
        while (patch != sub) {
            int cnt, s = encode_symbol(c, patch, value, SUBCONTEXT_SYMBOL_DELTA, 0, &cnt);
            if (s < 0)
                return -1;
            if (parent_ref == PREDICTED)
                predicted = s;
            else
                c->parent[parent_ref] = s;
            parent_ref = s;
            if (cnt <= 0) {
                c->escapes[patch] = (c->escapes[patch] + SUBCONTEXT_ESCAPE_DELTA) & M16;
                c->total[patch] = (c->total[patch] + SUBCONTEXT_ESCAPE_DELTA) & M16;
            }
            c->total[patch] = (c->total[patch] + SUBCONTEXT_SYMBOL_DELTA) & M16;
            if (cnt > 0xFF - 2 * SUBCONTEXT_SYMBOL_DELTA || c->total[patch] > (int)BOTTOM - 0x100)
                if (rescale(c, patch, 0) < 0)
                    return -1;
            patch = c->parent[patch];
        }
        if (parent_ref == PREDICTED)
            predicted = bottom;
        else
            c->parent[parent_ref] = bottom;
        if (n >= limit) {
            PyOS_snprintf(c->err_buf, sizeof c->err_buf, "decompressed data exceeds %zd bytes", limit);
            return fail(c, c->err_buf);
        }
        if (n >= *cap) {
            Py_ssize_t grown = *cap > limit / 2 ? limit : 2 * *cap;
            unsigned char *more = PyMem_Realloc(*out, (size_t)grown);
            if (more == NULL)
                return -1;
            *out = more;
            *cap = grown;
        }
        (*out)[n++] = (unsigned char)value;
        if (order >= SUBCONTEXT_ORDER)
            predicted = c->parent[predicted];
        else
            order++;
        if (c->next >= SYMBOL_CAPACITY - SUBCONTEXT_ORDER) { /* ENET_RANGE_CODER_FREE_SYMBOLS */
            c->next = 0;
            root = create_context(c, CONTEXT_ESCAPE_MINIMUM, CONTEXT_SYMBOL_MINIMUM);
            if (root < 0)
                return -1;
            predicted = 0;
            order = 0;
        }
    }
    return n;
}

static PyObject *decompress(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    Py_ssize_t limit, n, cap;
    Coder *c;
    unsigned char *out;
    PyObject *result;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*n:decompress", &buf, &limit))
        return NULL;
    if (buf.len == 0) {
        PyBuffer_Release(&buf);
        return Py_BuildValue("(ns)", (Py_ssize_t)0, "empty input");
    }
    if (limit < 0)
        limit = 0;
    cap = limit < 4096 ? (limit > 0 ? limit : 1) : 4096;  /* grown as the output comes (up to limit) */
    c = PyMem_Malloc(sizeof(Coder)); /* (create() sets every field of a symbol it hands out) */
    out = PyMem_Malloc((size_t)cap);
    if (c == NULL || out == NULL) {
        PyMem_Free(c);
        PyMem_Free(out);
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    c->next = 0;
    c->pos = 0;
    c->err = NULL;
    c->err_pos = 0;
    c->data = buf.buf;
    c->end = buf.len;
    n = run(c, &out, &cap, limit);
    if (n < 0)
        result = c->err != NULL ? Py_BuildValue("(ns)", c->err_pos, c->err) : PyErr_NoMemory();
    else
        result = PyBytes_FromStringAndSize((const char *)out, n);
    PyMem_Free(c);
    PyMem_Free(out);
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef methods[] = {
    {"decompress", decompress, METH_VARARGS,
     "decompress(data, limit) -> bytes, or (offset, reason) when the input is no range-coded ENet body"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rangecoder", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rangecoder(void) { return PyModule_Create(&module); }
