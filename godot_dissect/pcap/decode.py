"""Decode stage: one message body -> its value, in the conversation's dialect.

A body the verdict's dialect rejects may show that an earlier, ambiguous guess was wrong: the
guess is asked again (``detect.reconsider``) and the conversation switches dialect when another
one reads this body exactly and every earlier message as well.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..codec import decode_prefix
from ..codec import fast as _fast
from ..detect import reconsider
from ..errors import DecodeError
from ..spec.transports import MAX_DEPTH
from .conversations import Conversation


def decode_message(conv: Conversation, body: bytes, elsewhere: Counter[str]) -> tuple[Any, str]:
    """(value, dialect) of ``body`` (``conv.verdict`` is set); raises DecodeError when no dialect
    switch helps."""
    verdict = conv.verdict
    fast = _fast.fast_decode_prefix  # the compiled decoder straight away (None: off; it returns None to hand over)
    if fast is not None:
        # the dialect's compiled table called straight when it is cached (c_decode_prefix's first step)
        table = _fast.cached_table(verdict.dialect) if fast is _fast.c_decode_prefix else None  # type: ignore[union-attr]
        try:
            res = table.decode(body, True, MAX_DEPTH, 0, None) if table is not None \
                else fast(body, verdict.dialect, True, MAX_DEPTH, 0, None)  # type: ignore[union-attr]
        except RecursionError:  # decode_prefix below knows what to do
            res = None
        if res is not None:
            return res[0], verdict.dialect  # type: ignore[union-attr]
    try:
        return decode_prefix(body, verdict.dialect,  # type: ignore[union-attr]
                              allow_objects=True, max_depth=MAX_DEPTH)[0], verdict.dialect
    except DecodeError:
        switched = reconsider(verdict, conv.guess, body, elsewhere)
        if switched is None:
            raise
    conv.verdict = switched
    return decode_prefix(body, switched.dialect, allow_objects=True, max_depth=MAX_DEPTH)[0], switched.dialect
