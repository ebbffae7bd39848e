"""Limits of the command line's own inputs (``read -Y`` display filters)."""

from __future__ import annotations

#: operators nested in one display filter (``not not ...``, ``a and (b or (c ...))``); deeper is a
#: usage error naming the column, not a recursion error while compiling or running the filter
MAX_FILTER_DEPTH = 100
#: characters in one display filter
MAX_FILTER_LENGTH = 100_000
#: seconds one ``matches`` regex search may take on one record's field; beyond, ``read`` stops with a
#: usage error naming the regex's column (a backtracking pattern on hostile text would never end)
MAX_MATCH_SECONDS = 2.0
#: ``top --refresh`` seconds: faster only burns CPU redrawing, slower than an hour is not live (and
#: NaN/inf would reach time.sleep)
MIN_REFRESH = 0.05
MAX_REFRESH = 3600.0
#: ``fuzz`` / ``replay`` waits (--timeout, --reply-timeout, --ready-timeout, --minimise-seconds), in seconds:
#: a socket's timeout must be a finite number the platform's time_t holds (inf was an OverflowError), and a
#: wait of more than a day is a hang
MAX_WAIT_SECONDS = 86_400.0
