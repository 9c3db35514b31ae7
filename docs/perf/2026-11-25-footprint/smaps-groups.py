#!/usr/bin/env python3
"""smaps-groups.py FILE.smaps: resident memory (KiB) of a JVM by mapping group: the Java heap (the
mapping at 0xf0000000.. for -Xmx256m with compressed oops), the code cache (the 48 MiB reservation),
CDS archives, libjvm, other files, and the remaining anonymous memory (malloc arenas, thread stacks,
metaspace, direct buffers)."""
import re, sys
groups = {}
cur = None
for line in open(sys.argv[1]):
    m = re.match(r'^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$', line)
    if m:
        lo, hi, path = int(m.group(1), 16), int(m.group(2), 16), m.group(4).strip()
        size = (hi - lo) >> 10
        if 0xf0000000 <= lo < 0x100000000 and not path:
            g = 'java heap'
        elif path.endswith('.jsa'):
            g = 'CDS archives (' + ('file' if True else '') + ')'
        elif 'libjvm' in path:
            g = 'libjvm.so'
        elif path.startswith('/') :
            g = 'other files'
        elif path.startswith('['):
            g = path
        elif size in (49152, 48 * 1024 + 4, 48*1024 - 4):
            g = 'code cache (48 MiB reserved)'
        else:
            g = 'anonymous other'
        cur = groups.setdefault(g, [0, 0, 0])
        continue
    m = re.match(r'^(Rss|Anonymous):\s+(\d+) kB', line)
    if m and cur is not None:
        cur[0 if m.group(1) == 'Rss' else 1] += int(m.group(2))
tot = sum(v[0] for v in groups.values())
for g, (rss, anon, _) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
    print(f'{g:32s} rss {rss:7d} KiB  anon {anon:7d}')
print(f'{"total":32s} rss {tot:7d} KiB')
