#!/usr/bin/python3
"""usage: check_stored_codec.py TOPIC CODEC — the broker's segments of TOPIC (under SLUICE_DATA_DIR) hold a
batch compressed with CODEC; fails when no segment of TOPIC is found."""
import sys

from compat import TestFailure, check_stored_codec

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        check_stored_codec(sys.argv[1], sys.argv[2])
    except TestFailure as e:
        sys.exit("FAILED: %s" % e)
