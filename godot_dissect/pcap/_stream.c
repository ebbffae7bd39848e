/*
 * _stream.c - the common TCP step of pcap/reader.py compiled: a segment that continues its direction's
 * stream in order, fed to a synchronised length-prefix framer.
 *
 * InOrder(framer_class, pdu_class, max_pdu, opcode)(tcp, framer, seg, line) returns exactly the items
 *     [item for chunk in tcp.add(seg) for item in framer.feed(chunk)]
 * would return, and leaves tcp and framer as those calls leave them, for a segment with data and no
 * SYN/FIN/RST (the caller checks the flags) when
 *   - tcp holds no out-of-order segment and the segment starts at tcp.next_seq (tcp.add: one chunk,
 *     no gap), and
 *   - framer is a framing.LengthPrefixFramer that is synchronised, in no run of skipped bytes, and
 *     holds nothing or the start of a PDU whose length prefix is plausible (<= max_pdu), and
 *   - what the segment leaves in the framer's buffer does not start with an implausible length (that
 *     starts the resynchronisation, which stays in Python).
 * For anything else it returns None having changed nothing, and the caller takes the Python path.
 * line: None, or (write, head) with head the 7-tuple (src, sport, dst, dport, transport, direction,
 * dialect): each whole PDU is then written as write(body, frame, time, *head, offset, wire) (a
 * records.variant_line_writer, or export's dataset.arrow.variant_row_writer) and what it returns (a
 * line, or a row) is the item instead of the Pdu; from the first PDU the
 * writer leaves to the reader (it returns None) on, the items are Pdus again, in order, since the
 * reader's record of that PDU may change the conversation's dialect.
 * framing.py stays the one reference: the ledger's spans are read and written as WireLedger.add and
 * .take and _cut_chunk do (its own take when a span is not what they write), and tests compare both
 * paths, state included, on random segmentations, hostile ones included.
 *
 * Every read is bounds-checked against the segment's length; the only allocations are the PDU bodies
 * (each no longer than the segment plus what the framer held) and the framer's buffer growing by the
 * segment's leftover, as in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall_slot;
    PyObject *framer_class; /* framing.LengthPrefixFramer */
    PyObject *pdu_class;    /* framing.Pdu */
    PyObject *opcode;       /* the opcode of a length-prefixed PDU (WS_BINARY) */
    long long max_pdu;      /* spec.transports.MAX_PDU */
} InOrder;

static PyObject *s_pending, *s_next_seq, *s_offset, *s_synced, *s_run, *s_buf, *s_base, *s_ledger, *s_spans,
    *s_frame, *s_time, *s_seq, *s_payload, *s_frame_len, *s_take, *s_clear;

/* the u32 little-endian length prefix (spec.transports.LENGTH_PREFIX; inorder.py checks it is that) */
#define PREFIX 4
static inline long long le32(const unsigned char *p)
{
    return (long long)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* getattr(obj, name) as a long long in *out: 0, or -1 (not an int that fits: no error left set) */
static int attr_ll(PyObject *obj, PyObject *name, long long *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL || !PyLong_CheckExact(v)) {
        Py_XDECREF(v);
        PyErr_Clear();
        return -1;
    }
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (*out == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

static int set_ll(PyObject *obj, PyObject *name, long long v)
{
    PyObject *o = PyLong_FromLongLong(v);
    int r;
    if (o == NULL)
        return -1;
    r = PyObject_SetAttr(obj, name, o);
    Py_DECREF(o);
    return r;
}

/* where the PDUs go: the list, and the line writer while it writes them */
typedef struct {
    PyObject *out;
    PyObject *write; /* NULL: Pdus */
    PyObject *head;  /* the writer's 7 head arguments (a tuple) */
} Sink;

#define HEAD_ARGS 7

/* the line (or row) of Pdu(frame, time, offset, body, opcode, wire), or the Pdu, appended to the sink's list
 * (steals body): 0 or -1 */
static int add_pdu(InOrder *self, Sink *sink, PyObject *frame, PyObject *time, long long offset, PyObject *body,
                   PyObject *wire)
{
    PyObject *args[6], *pdu;
    if (body == NULL)
        return -1;
    if (sink->write != NULL) {
        PyObject *wargs[5 + HEAD_ARGS], *line;
        Py_ssize_t i;
        wargs[0] = body;
        wargs[1] = frame;
        wargs[2] = time;
        for (i = 0; i < HEAD_ARGS; i++)
            wargs[3 + i] = PyTuple_GET_ITEM(sink->head, i);
        wargs[3 + HEAD_ARGS] = PyLong_FromLongLong(offset);
        wargs[4 + HEAD_ARGS] = wire;
        line = wargs[3 + HEAD_ARGS] != NULL ? PyObject_Vectorcall(sink->write, wargs, 5 + HEAD_ARGS, NULL) : NULL;
        Py_XDECREF(wargs[3 + HEAD_ARGS]);
        if (line == NULL) {
            Py_DECREF(body);
            return -1;
        }
        if (line != Py_None) {  /* the line (read's str, or export's row tuple) */
            Py_DECREF(body);
            if (PyList_Append(sink->out, line) < 0) {
                Py_DECREF(line);
                return -1;
            }
            Py_DECREF(line);
            return 0;
        }
        Py_DECREF(line);
        sink->write = NULL;  /* the reader makes this PDU's record, and writes the rest */
    }
    args[0] = frame;
    args[1] = time;
    args[2] = PyLong_FromLongLong(offset);
    args[3] = body;
    args[4] = self->opcode;
    args[5] = wire;
    pdu = args[2] != NULL ? PyObject_Vectorcall(self->pdu_class, args, 6, NULL) : NULL;
    Py_XDECREF(args[2]);
    Py_DECREF(body);
    if (pdu == NULL)
        return -1;
    if (PyList_Append(sink->out, pdu) < 0) {
        Py_DECREF(pdu);
        return -1;
    }
    Py_DECREF(pdu);
    return 0;
}

/* The ledger's spans, [start, end, frame_len, bytes still counted, wire bytes per stream byte (0: not fixed)]
 * lists in a deque: framing.WireLedger's, read and written here as its methods do. */

/* span[i] as a long long in *out: 0, or -1 (not an int that fits: no error left set) */
static int span_ll(PyObject *span, Py_ssize_t i, long long *out)
{
    PyObject *v = PyList_GET_ITEM(span, i);
    if (!PyLong_CheckExact(v))
        return -1;
    *out = PyLong_AsLongLong(v);
    if (*out == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* WireLedger.add(start, n, frame_len) for n > 0 */
static int ledger_add(PyObject *spans, long long start, Py_ssize_t n, PyObject *frame_len)
{
    PyObject *span = Py_BuildValue("[LLOnd]", start, start + (long long)n, frame_len, n, 0.0), *v;
    if (span == NULL)
        return -1;
    v = PyObject_CallMethod(spans, "append", "O", span);
    Py_DECREF(span);
    Py_XDECREF(v);
    return v == NULL ? -1 : 0;
}

/* span (a new reference) is a list [int, int, int, int, float] whose ints fit: 1, 0 (it is not), -1 (error) */
static int span_ok(PyObject *span)
{
    long long x;
    Py_ssize_t i;
    if (!PyList_CheckExact(span) || PyList_GET_SIZE(span) != 5 || !PyFloat_CheckExact(PyList_GET_ITEM(span, 4)))
        return 0;
    for (i = 0; i < 4; i++)
        if (span_ll(span, i, &x) < 0)
            return 0;
    /* frame_len / count exactly as Python's int / int when the rate is fixed here */
    return span_ll(span, 2, &x) == 0 && x <= (1LL << 53) && span_ll(span, 3, &x) == 0 && x <= (1LL << 53);
}

/* WireLedger.take(a, b): the wire bytes of stream bytes [a, b) as a float, or NULL with an error set (its
 * own method when a span is not what add and _cut_chunk write). The deque is walked by an iterator, as
 * take's for loop walks it: indexing a deque costs up to len/64 steps, and a PDU held over a million
 * 1-byte segments has a million spans. */
static PyObject *ledger_take(PyObject *ledger, PyObject *spans, long long a, long long b)
{
    PyObject *it, *span;
    Py_ssize_t i, drop = 0;
    double total = 0.0;
    if ((it = PyObject_GetIter(spans)) == NULL)
        return NULL;
    while ((span = PyIter_Next(it)) != NULL) {  /* every span take reads checked before any is changed */
        long long s0 = 0;
        int ok = span_ok(span);
        if (ok)
            span_ll(span, 0, &s0);
        Py_DECREF(span);
        if (!ok) {
            PyObject *pa = PyLong_FromLongLong(a), *pb = PyLong_FromLongLong(b), *w;
            Py_DECREF(it);
            w = pa != NULL && pb != NULL ? PyObject_CallMethodObjArgs(ledger, s_take, pa, pb, NULL) : NULL;
            Py_XDECREF(pa);
            Py_XDECREF(pb);
            return w;
        }
        if (s0 >= b)
            break;
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    if ((it = PyObject_GetIter(spans)) == NULL)
        return NULL;
    for (i = 0; (span = PyIter_Next(it)) != NULL; i++) {
        PyObject *rate;
        long long s0 = 0, s1 = 0, flen = 0, count = 0, ov;
        double r;
        span_ll(span, 0, &s0);
        span_ll(span, 1, &s1);
        span_ll(span, 2, &flen);
        span_ll(span, 3, &count);
        if (i == drop && s1 <= b)
            drop++;  /* it ends by b: let go of it (spans lie in stream order) */
        if (s0 >= b) {
            Py_DECREF(span);
            break;
        }
        ov = (b < s1 ? b : s1) - (a > s0 ? a : s0);
        if (ov > 0) {
            if ((r = PyFloat_AS_DOUBLE(PyList_GET_ITEM(span, 4))) == 0.0) {
                r = count > 0 ? (double)flen / (double)count : 0.0;
                if ((rate = PyFloat_FromDouble(r)) == NULL) {
                    Py_DECREF(span);
                    Py_DECREF(it);
                    return NULL;
                }
                PyList_SetItem(span, 4, rate);  /* steals rate */
            }
            total += r * (double)ov;
        }
        Py_DECREF(span);
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    for (i = 0; i < drop; i++) {
        PyObject *v = PyObject_CallMethod(spans, "popleft", NULL);
        if (v == NULL)
            return NULL;
        Py_DECREF(v);
    }
    return PyFloat_FromDouble(total);
}

/* buf += p[0:n] */
static int buf_extend(PyObject *buf, const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t old = PyByteArray_GET_SIZE(buf);
    if (n == 0)
        return 0;
    if (PyByteArray_Resize(buf, old + n) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(buf) + old, p, (size_t)n);
    return 0;
}

/* __call__(tcp, framer, seg, line) -> list of Pdu or lines, or None (not the common case: nothing changed) */
static PyObject *InOrder_vectorcall(InOrder *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Sink sink = {NULL, NULL, NULL};
    PyObject *tcp, *framer, *seg, *line, *pending = NULL, *data = NULL, *buf = NULL, *ledger = NULL, *spans = NULL;
    PyObject *frame = NULL, *time = NULL, *frame_len = NULL, *out = NULL, *result = NULL, *v;
    long long next_seq, seq, offset, base, flen, start, n_held = -1;
    Py_ssize_t size, held, nspans, pos, first, scan;
    const unsigned char *d;
    int truth;
    double rate;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 4) {
        PyErr_SetString(PyExc_TypeError, "in_order(tcp, framer, seg, line)");
        return NULL;
    }
    tcp = args[0];
    framer = args[1];
    seg = args[2];
    line = args[3];
    if (line != Py_None) {
        if (!PyTuple_CheckExact(line) || PyTuple_GET_SIZE(line) != 2 || !PyTuple_CheckExact(PyTuple_GET_ITEM(line, 1))
            || PyTuple_GET_SIZE(PyTuple_GET_ITEM(line, 1)) != HEAD_ARGS) {
            PyErr_SetString(PyExc_TypeError, "line: None or (write, (src, sport, dst, dport, transport, direction, "
                                             "dialect))");
            return NULL;
        }
        sink.write = PyTuple_GET_ITEM(line, 0);
        sink.head = PyTuple_GET_ITEM(line, 1);
    }
    if ((PyObject *)Py_TYPE(framer) != self->framer_class)
        Py_RETURN_NONE;
    /* tcp.add: nothing held out of order, the segment at next_seq */
    if ((pending = PyObject_GetAttr(tcp, s_pending)) == NULL)
        return NULL;
    truth = PyList_CheckExact(pending) && PyList_GET_SIZE(pending) == 0;
    Py_DECREF(pending);
    if (!truth || attr_ll(tcp, s_next_seq, &next_seq) < 0 || attr_ll(seg, s_seq, &seq) < 0 || seq != next_seq
        || attr_ll(tcp, s_offset, &offset) < 0 || attr_ll(framer, s_base, &base) < 0
        || attr_ll(seg, s_frame_len, &flen) < 0)
        Py_RETURN_NONE;
    /* the framer: synchronised, no run of skipped bytes */
    if ((v = PyObject_GetAttr(framer, s_synced)) == NULL)
        return NULL;
    truth = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (truth <= 0) {
        if (truth < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    if ((v = PyObject_GetAttr(framer, s_run)) == NULL)
        return NULL;
    truth = v == Py_None;
    Py_DECREF(v);
    if (!truth)
        Py_RETURN_NONE;
    if ((data = PyObject_GetAttr(seg, s_payload)) == NULL || (buf = PyObject_GetAttr(framer, s_buf)) == NULL
        || (ledger = PyObject_GetAttr(framer, s_ledger)) == NULL || (spans = PyObject_GetAttr(ledger, s_spans)) == NULL)
        goto done;
    if (!PyBytes_CheckExact(data) || PyBytes_GET_SIZE(data) == 0 || !PyByteArray_CheckExact(buf)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if ((nspans = PyObject_Size(spans)) < 0)
        goto done;
    d = (const unsigned char *)PyBytes_AS_STRING(data);
    size = PyBytes_GET_SIZE(data);
    held = PyByteArray_GET_SIZE(buf);
    if (held == 0 && nspans == 0) {
        first = 0;  /* the segment starts a PDU */
    } else if (held >= PREFIX && (n_held = le32((unsigned char *)PyByteArray_AS_STRING(buf))) <= self->max_pdu
               && n_held + PREFIX > held) {
        first = (Py_ssize_t)(n_held + PREFIX - held);  /* it ends the held PDU at this index (or later) */
    } else {
        result = Py_NewRef(Py_None);
        goto done;
    }
    /* what the segment leaves must not start with an implausible length (the resynchronisation) */
    if (first <= size) {
        scan = first;
        while (size - scan >= PREFIX) {
            long long n = le32(d + scan);
            if (n > self->max_pdu || n > size - scan - PREFIX)
                break;
            scan += PREFIX + (Py_ssize_t)n;
        }
        if (size - scan >= PREFIX && le32(d + scan) > self->max_pdu) {
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    /* the common case: from here on, what tcp.add and framer.feed do */
    if ((frame = PyObject_GetAttr(seg, s_frame)) == NULL || (time = PyObject_GetAttr(seg, s_time)) == NULL
        || (frame_len = PyObject_GetAttr(seg, s_frame_len)) == NULL || (out = PyList_New(0)) == NULL)
        goto done;
    sink.out = out;
    if (set_ll(tcp, s_next_seq, (next_seq + size) & 0xFFFFFFFFLL) < 0 || set_ll(tcp, s_offset, offset + size) < 0
        || PyObject_SetAttr(framer, s_frame, frame) < 0 || PyObject_SetAttr(framer, s_time, time) < 0)
        goto done;
    start = base + held;  /* the segment's stream offset */
    if (first) {
        PyObject *body, *wire;
        if (ledger_add(spans, start, size, frame_len) < 0)
            goto done;
        if (first > size) {  /* the held PDU goes on past this segment */
            if (buf_extend(buf, d, size) < 0)
                goto done;
            result = Py_NewRef(out);
            goto done;
        }
        if ((body = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n_held)) == NULL)
            goto done;
        memcpy(PyBytes_AS_STRING(body), PyByteArray_AS_STRING(buf) + PREFIX, (size_t)(held - PREFIX));
        memcpy(PyBytes_AS_STRING(body) + held - PREFIX, d, (size_t)first);
        if ((wire = ledger_take(ledger, spans, base, base + PREFIX + n_held)) == NULL) {
            Py_DECREF(body);
            goto done;
        }
        truth = add_pdu(self, &sink, frame, time, base, body, wire);
        Py_DECREF(wire);
        if (truth < 0 || PyByteArray_Resize(buf, 0) < 0)
            goto done;
    }
    /* framer._cut_chunk(chunk, start, first, out) */
    rate = (double)flen / (double)size;
    pos = first;
    while (size - pos >= PREFIX) {
        long long n = le32(d + pos);
        Py_ssize_t end;
        PyObject *wire;
        if (n > self->max_pdu || n > size - pos - PREFIX)
            break;
        end = pos + PREFIX + (Py_ssize_t)n;
        if ((wire = PyFloat_FromDouble(rate * (double)(end - pos))) == NULL)
            goto done;
        truth = add_pdu(self, &sink, frame, time, start + pos, PyBytes_FromStringAndSize((const char *)d + pos + PREFIX,
                                                                                        (Py_ssize_t)n), wire);
        Py_DECREF(wire);
        if (truth < 0)
            goto done;
        pos = end;
    }
    if (set_ll(framer, s_base, start + pos) < 0)
        goto done;
    if (pos < size) {
        if (!first) {  /* the chunk's span (WireLedger.add's, its rate fixed when a PDU was taken from it) */
            PyObject *span = Py_BuildValue("[LLOnd]", start, start + (long long)size, frame_len, size, pos ? rate : 0.0);
            if (span == NULL)
                goto done;
            v = PyObject_CallMethod(spans, "append", "O", span);
            Py_DECREF(span);
            if (v == NULL)
                goto done;
            Py_DECREF(v);
        }
        if (buf_extend(buf, d + pos, size - pos) < 0)
            goto done;
    } else if (first) {
        if ((v = PyObject_CallMethodNoArgs(spans, s_clear)) == NULL)
            goto done;
        Py_DECREF(v);
    }
    result = Py_NewRef(out);
done:
    Py_XDECREF(data);
    Py_XDECREF(buf);
    Py_XDECREF(ledger);
    Py_XDECREF(spans);
    Py_XDECREF(frame);
    Py_XDECREF(time);
    Py_XDECREF(frame_len);
    Py_XDECREF(out);
    return result;
}

static PyObject *InOrder_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"framer_class", "pdu_class", "max_pdu", "opcode", NULL};
    PyObject *framer_class, *pdu_class, *opcode;
    long long max_pdu;
    InOrder *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOLO", kwlist, &framer_class, &pdu_class, &max_pdu, &opcode))
        return NULL;
    if (max_pdu < 0 || max_pdu > 0xFFFFFFFFLL) {
        PyErr_SetString(PyExc_ValueError, "max_pdu out of the u32 range");
        return NULL;
    }
    if ((self = (InOrder *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    self->vectorcall_slot = (vectorcallfunc)InOrder_vectorcall;
    self->framer_class = Py_NewRef(framer_class);
    self->pdu_class = Py_NewRef(pdu_class);
    self->opcode = Py_NewRef(opcode);
    self->max_pdu = max_pdu;
    return (PyObject *)self;
}

static void InOrder_dealloc(InOrder *self)
{
    Py_XDECREF(self->framer_class);
    Py_XDECREF(self->pdu_class);
    Py_XDECREF(self->opcode);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject InOrderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_dissect.pcap._stream.InOrder",
    .tp_doc = "InOrder(framer_class, pdu_class, max_pdu, opcode)(tcp, framer, seg): the PDUs tcp.add and "
              "framer.feed make of an in-order segment, or None (nothing changed) for any other case.",
    .tp_basicsize = sizeof(InOrder),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(InOrder, vectorcall_slot),
    .tp_call = PyVectorcall_Call,
    .tp_new = InOrder_new,
    .tp_dealloc = (destructor)InOrder_dealloc,
};

static struct PyModuleDef stream_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godot_dissect.pcap._stream",
    .m_doc = "The reader's in-order TCP step (tcp.add + LengthPrefixFramer.feed) compiled.",
    .m_size = -1,
};

#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC PyInit__stream(void)
{
    PyObject *m;
    INTERN(s_pending, "pending");
    INTERN(s_next_seq, "next_seq");
    INTERN(s_offset, "offset");
    INTERN(s_synced, "synced");
    INTERN(s_run, "run");
    INTERN(s_buf, "buf");
    INTERN(s_base, "base");
    INTERN(s_ledger, "ledger");
    INTERN(s_spans, "spans");
    INTERN(s_frame, "frame");
    INTERN(s_time, "time");
    INTERN(s_seq, "seq");
    INTERN(s_payload, "payload");
    INTERN(s_frame_len, "frame_len");
    INTERN(s_take, "take");
    INTERN(s_clear, "clear");
    if (PyType_Ready(&InOrderType) < 0)
        return NULL;
    if ((m = PyModule_Create(&stream_module)) == NULL)
        return NULL;
    Py_INCREF(&InOrderType);
    if (PyModule_AddObject(m, "InOrder", (PyObject *)&InOrderType) < 0) {
        Py_DECREF(&InOrderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
