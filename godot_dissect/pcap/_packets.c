/*
 * _packets.c - the compiled form of pcap/packets.py's _parse for the common frame: Ethernet
 * (VLAN tags included), IPv4, UDP or TCP.
 *
 * Parser(segment_class, fallback, ethernet_link)(frame, ts, buf, link, frame_len) returns exactly
 * what packets._parse returns for the same arguments: a Segment, or None.  Any other link type or
 * network layer (IPv6, loopback, Linux cooked, raw IP) is handed to `fallback` (that _parse), so
 * the Python function stays the one reference; tests compare the two on every committed capture
 * and on random and truncated frames.
 *
 * Every read is bounds-checked against the frame's captured length; nothing is allocated from a
 * length read off the wire (the payload is a slice of the frame, clamped like Python's slicing).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

/* EtherTypes and IP protocol numbers (IEEE / IANA assignments, as packets._parse writes them) */
#define ETH_IPV4 0x0800
#define ETH_VLAN 0x8100
#define ETH_QINQ 0x88A8
#define IPPROTO_UDP_ 17
#define IPPROTO_TCP_ 6

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall_slot;
    PyObject *segment;   /* the Segment class */
    PyObject *fallback;  /* packets._parse */
    PyObject *udp, *tcp; /* interned "udp" / "tcp" */
    long ethernet;       /* the Ethernet link type */
    /* the last addresses turned into text: a capture has few, and consecutive frames repeat them */
    uint32_t last_ip[2];
    PyObject *last_str[2];
    /* where a Segment keeps its SEGMENT_FIELDS fields, in __init__'s order (a slots dataclass without
     * __post_init__: its __init__ only stores them), so a Segment is made without running __init__;
     * no_slots: not such a class, __init__ is called */
    Py_ssize_t slot[11];
    int no_slots;
} Parser;

#define SEGMENT_FIELDS 11

/* Segment(*fields): stored in its slots as its __init__ stores them, or by __init__ (new reference) */
static PyObject *make_segment(Parser *self, PyObject *const *fields)
{
    PyTypeObject *tp = (PyTypeObject *)self->segment;
    PyObject *seg;
    int i;
    if (self->no_slots)
        return PyObject_Vectorcall(self->segment, fields, SEGMENT_FIELDS, NULL);
    if ((seg = tp->tp_alloc(tp, 0)) == NULL)
        return NULL;
    for (i = 0; i < SEGMENT_FIELDS; i++)
        *(PyObject **)((char *)seg + self->slot[i]) = Py_NewRef(fields[i]);
    return seg;
}

/* The slot offsets of segment's fields (its __match_args__, __init__'s positional order, each a member
 * descriptor of an object slot), or no_slots when any is not so or the class has a __post_init__. */
static int find_slots(Parser *self, PyObject *segment)
{
    PyObject *names, *post;
    Py_ssize_t i;
    self->no_slots = 1;
    if (!PyType_Check(segment) || ((PyTypeObject *)segment)->tp_new != PyBaseObject_Type.tp_new)
        return 0;
    if ((post = PyObject_GetAttrString(segment, "__post_init__")) != NULL) {
        Py_DECREF(post);
        return 0;
    }
    PyErr_Clear();
    if ((names = PyObject_GetAttrString(segment, "__match_args__")) == NULL) {
        PyErr_Clear();
        return 0;
    }
    if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != SEGMENT_FIELDS) {
        Py_DECREF(names);
        return 0;
    }
    for (i = 0; i < SEGMENT_FIELDS; i++) {
        PyObject *d = PyObject_GetAttr(segment, PyTuple_GET_ITEM(names, i));
        int ok = d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)
                 && ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX
                 && !(((PyMemberDescrObject *)d)->d_member->flags & READONLY);
        if (ok)
            self->slot[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_XDECREF(d);
        if (!ok) {
            PyErr_Clear();
            Py_DECREF(names);
            return 0;
        }
    }
    Py_DECREF(names);
    self->no_slots = 0;
    return 0;
}

static inline unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static inline uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* "a.b.c.d", as socket.inet_ntoa writes it; one of two cached strings when it repeats */
static PyObject *ip4_text(Parser *self, uint32_t ip)
{
    char text[16];
    int slot;
    for (slot = 0; slot < 2; slot++)
        if (self->last_str[slot] != NULL && self->last_ip[slot] == ip) {
            Py_INCREF(self->last_str[slot]);
            return self->last_str[slot];
        }
    snprintf(text, sizeof text, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
    slot = self->last_str[0] != NULL && self->last_str[1] == NULL ? 1 : 0;
    if (self->last_str[0] != NULL && self->last_str[1] != NULL) {  /* evict the older */
        Py_SETREF(self->last_str[0], self->last_str[1]);
        self->last_ip[0] = self->last_ip[1];
        self->last_str[1] = NULL;
        slot = 1;
    }
    if ((self->last_str[slot] = PyUnicode_FromString(text)) == NULL)
        return NULL;
    self->last_ip[slot] = ip;
    Py_INCREF(self->last_str[slot]);
    return self->last_str[slot];
}

static PyObject *fallback(Parser *self, PyObject *const *args, Py_ssize_t nargs)
{
    return PyObject_Vectorcall(self->fallback, args, nargs, NULL);
}

/* __call__(frame, ts, buf, link, frame_len) -> Segment | None */
static PyObject *Parser_vectorcall(Parser *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), len, off, end, start;
    const unsigned char *b;
    Py_buffer view;
    long link;
    unsigned et, ihl, total, frag, proto, sp, dp, flags = 0;
    uint32_t seq = 0;
    PyObject *src = NULL, *dst = NULL, *payload = NULL, *seg = NULL, *fields[11];
    if (kwnames != NULL || nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "parse(frame, ts, buf, link, frame_len)");
        return NULL;
    }
    link = PyLong_AsLong(args[3]);
    if (link == -1 && PyErr_Occurred())
        return NULL;
    if (link != self->ethernet)
        return fallback(self, args, nargs);
    if (PyObject_GetBuffer(args[2], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    b = view.buf;
    len = view.len;
    if (len < 14)
        goto none;
    et = be16(b + 12);
    off = 14;
    while ((et == ETH_VLAN || et == ETH_QINQ) && len >= off + 4) {
        et = be16(b + off + 2);
        off += 4;
    }
    if (et != ETH_IPV4) {
        PyBuffer_Release(&view);
        return fallback(self, args, nargs);  /* IPv6 and the rest: the Python reference */
    }
    if (len < off + 20)
        goto none;
    ihl = b[off] & 0x0F;
    total = be16(b + off + 2);
    frag = be16(b + off + 6);
    proto = b[off + 9];
    if (frag & 0x3FFF)  /* a fragment (offset or more-fragments): not reassembled */
        goto none;
    end = total ? (len < off + (Py_ssize_t)total ? len : off + (Py_ssize_t)total) : len;
    if (proto == IPPROTO_UDP_) {
        Py_ssize_t t = off + ihl * 4;
        if (end < t + 8)
            goto none;
        sp = be16(b + t);
        dp = be16(b + t + 2);
        start = t + 8;
    } else if (proto == IPPROTO_TCP_) {
        Py_ssize_t t = off + ihl * 4;
        if (end < t + 20)
            goto none;
        sp = be16(b + t);
        dp = be16(b + t + 2);
        seq = be32(b + t + 4);
        flags = b[t + 13];
        start = t + (b[t + 12] >> 4) * 4;
    } else {
        goto none;
    }
    if (start > end)  /* Python's slice of an inverted range: empty */
        start = end;
    if ((src = ip4_text(self, be32(b + off + 12))) == NULL || (dst = ip4_text(self, be32(b + off + 16))) == NULL
        || (payload = PyBytes_FromStringAndSize((const char *)b + start, end - start)) == NULL)
        goto done;
    fields[0] = args[0];
    fields[1] = args[1];
    fields[2] = proto == IPPROTO_UDP_ ? self->udp : self->tcp;
    fields[3] = src;
    fields[4] = PyLong_FromLong((long)sp);
    fields[5] = dst;
    fields[6] = PyLong_FromLong((long)dp);
    fields[7] = payload;
    fields[8] = PyLong_FromUnsignedLong((unsigned long)seq);
    fields[9] = PyLong_FromLong((long)flags);
    fields[10] = args[4];
    if (fields[4] != NULL && fields[6] != NULL && fields[8] != NULL && fields[9] != NULL)
        seg = make_segment(self, fields);
    Py_XDECREF(fields[4]);
    Py_XDECREF(fields[6]);
    Py_XDECREF(fields[8]);
    Py_XDECREF(fields[9]);
done:
    Py_XDECREF(src);
    Py_XDECREF(dst);
    Py_XDECREF(payload);
    PyBuffer_Release(&view);
    return seg;
none:
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* Parser.cut(buf, pos, at, frame, little, divisor, offset, link) -> (segments, pos, at): pcapng._packets_chunked's
 * loop over the whole Enhanced Packet Blocks of buf from pos on, stopping where that loop stops (a block of another
 * type, not all in buf, shorter than the least packet block, of a length not a multiple of 4 or of an interface other
 * than 0, whose link type and timestamps the arguments are: the Python loop
 * takes it from there, errors included), each packet parsed as __call__ parses it, numbered from frame + 1.
 * segments: one entry per packet, its Segment or None. at: the file offset of pos, advanced as pos is. */
static PyObject *Parser_cut(Parser *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t pos, at, frame, n;
    int little;
    double divisor;
    long long offset;
    PyObject *link, *list = NULL, *out = NULL;
    const unsigned char *b;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "cut(buf, pos, at, frame, little, divisor, offset, link)");
        return NULL;
    }
    pos = PyLong_AsSsize_t(args[1]);
    at = PyLong_AsSsize_t(args[2]);
    frame = PyLong_AsSsize_t(args[3]);
    little = PyObject_IsTrue(args[4]);
    divisor = PyFloat_AsDouble(args[5]);
    offset = PyLong_AsLongLong(args[6]);
    link = args[7];
    if (PyErr_Occurred() || little < 0)
        return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    b = view.buf;
    n = view.len;
    if (pos < 0 || (list = PyList_New(0)) == NULL)
        goto done;
    /* type, length, interface, timestamp high and low, captured and original length */
    while (n - pos >= 28) {
        const unsigned char *h = b + pos;
#define U32(p) (little ? (uint32_t)(p)[0] | (uint32_t)(p)[1] << 8 | (uint32_t)(p)[2] << 16 | (uint32_t)(p)[3] << 24 \
                       : be32(p))
        uint32_t btype = U32(h), length = U32(h + 4), iface = U32(h + 8), high = U32(h + 12), low = U32(h + 16);
        uint32_t caplen = U32(h + 20);
        uint32_t orig = U32(h + 24);
#undef U32
        Py_ssize_t start = pos + 28, end = pos + (Py_ssize_t)length, stop;
        PyObject *fargs[5], *seg;
        if (btype != 6 || end > n || length < 32 || length % 4 || iface != 0)
            break;
        stop = (Py_ssize_t)caplen < end - start ? start + (Py_ssize_t)caplen : end;
        frame++;
        fargs[0] = PyLong_FromSsize_t(frame);
        fargs[1] = PyFloat_FromDouble((double)offset + (double)((uint64_t)high << 32 | low) / divisor);
        fargs[2] = PyBytes_FromStringAndSize((const char *)b + start, stop - start);
        fargs[3] = link;
        fargs[4] = PyLong_FromUnsignedLong(orig);
        seg = fargs[0] && fargs[1] && fargs[2] && fargs[4] ? Parser_vectorcall(self, fargs, 5, NULL) : NULL;
        Py_XDECREF(fargs[0]);
        Py_XDECREF(fargs[1]);
        Py_XDECREF(fargs[2]);
        Py_XDECREF(fargs[4]);
        if (seg == NULL) {
            Py_CLEAR(list);
            goto done;
        }
        if (PyList_Append(list, seg) < 0) {
            Py_DECREF(seg);
            Py_CLEAR(list);
            goto done;
        }
        Py_DECREF(seg);
        pos = end;
        at += (Py_ssize_t)length;
    }
    out = Py_BuildValue("(Nnn)", list, pos, at);
    list = NULL;
done:
    Py_XDECREF(list);
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef Parser_methods[] = {
    {"cut", (PyCFunction)(void (*)(void))Parser_cut, METH_FASTCALL,
     "cut(buf, pos, at, frame, little, divisor, offset, link) -> (segments, pos, at) of the whole Enhanced Packet "
     "Blocks of buf from pos on"},
    {NULL, NULL, 0, NULL},
};

static PyObject *Parser_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"segment", "fallback", "ethernet_link", NULL};
    PyObject *segment, *fb;
    long ethernet;
    Parser *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOl", kwlist, &segment, &fb, &ethernet))
        return NULL;
    if ((self = (Parser *)type->tp_alloc(type, 0)) == NULL)
        return NULL;
    self->vectorcall_slot = (vectorcallfunc)Parser_vectorcall;
    Py_INCREF(segment);
    self->segment = segment;
    Py_INCREF(fb);
    self->fallback = fb;
    self->ethernet = ethernet;
    self->udp = PyUnicode_InternFromString("udp");
    self->tcp = PyUnicode_InternFromString("tcp");
    if (self->udp == NULL || self->tcp == NULL || find_slots(self, segment) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void Parser_dealloc(Parser *self)
{
    Py_XDECREF(self->segment);
    Py_XDECREF(self->fallback);
    Py_XDECREF(self->udp);
    Py_XDECREF(self->tcp);
    Py_XDECREF(self->last_str[0]);
    Py_XDECREF(self->last_str[1]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject ParserType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "godot_dissect.pcap._packets.Parser",
    .tp_doc = "packets._parse for Ethernet/IPv4/UDP/TCP frames, in C; anything else goes to the fallback.",
    .tp_basicsize = sizeof(Parser),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Parser, vectorcall_slot),
    .tp_call = PyVectorcall_Call,
    .tp_new = Parser_new,
    .tp_methods = Parser_methods,
    .tp_dealloc = (destructor)Parser_dealloc,
};

static struct PyModuleDef packets_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "godot_dissect.pcap._packets",
    .m_doc = "Compiled Ethernet/IPv4/UDP/TCP header parse for godot_dissect.pcap.packets.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__packets(void)
{
    PyObject *m;
    if (PyType_Ready(&ParserType) < 0)
        return NULL;
    if ((m = PyModule_Create(&packets_module)) == NULL)
        return NULL;
    Py_INCREF(&ParserType);
    if (PyModule_AddObject(m, "Parser", (PyObject *)&ParserType) < 0) {
        Py_DECREF(&ParserType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
