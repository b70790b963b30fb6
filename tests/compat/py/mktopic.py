#!/usr/bin/python3
"""Creates a topic through confluent-kafka's AdminClient (setup step of the shell tests).

usage: /usr/bin/python3 mktopic.py NAME [PARTITIONS] [KEY=VALUE...]   (broker: SLUICE_BOOTSTRAP)
"""
import sys

from confluent_tests import admin, create_topic

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    args = sys.argv[2:]
    partitions = int(args.pop(0)) if args and args[0].isdigit() else 1
    configs = dict(a.split("=", 1) for a in args)
    try:
        create_topic(admin(), sys.argv[1], configs, partitions=partitions)
    except AssertionError as e:
        sys.exit("setup failed: %s" % e)
