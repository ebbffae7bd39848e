/* What _speedups.c (the codec) and _render.c (text notation, JSON form) share: both are compiled
 * into the one godot_dissect.codec._speedups extension. */
#ifndef GODOT_DISSECT_SPEEDUPS_H
#define GODOT_DISSECT_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* most components a struct plan or packed element may have (Projection has 16) */
#define MAX_LEAVES 64

/* Struct plans, (cls, child, ...) with a child a wire index or a nested plan (see fast.py). */
int plan_leaves(PyObject *plan, Py_ssize_t *leaves);               /* validate; count leaves */
int plan_flatten(PyObject *plan, PyObject *v, PyObject **vals);    /* -1: not exactly that shape */

/* A message body's value decoded by a Table (a new reference), or NULL, no exception set: bail. */
PyObject *codec_decode_body(PyObject *table, PyObject *data, long long max_depth);

/* Adds TextWriter, JsonWriter, TEXT_KINDS and JSON_KINDS to the module (_render.c). */
int render_init(PyObject *m);

#endif
