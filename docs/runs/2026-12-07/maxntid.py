# usage: cap.py IN OUT NTID NAME... : inserts ".maxntid NTID, 1, 1" into the named entries
import re, sys
src, dst, ntid, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
s = open(src).read()
for n in names:
    pat = re.compile(r'(\.visible \.entry ' + n + r'\((?:[^)]*)\)\n)\{')
    s, k = pat.subn(lambda m: m.group(1) + f'.maxntid {ntid}, 1, 1\n{{', s)
    assert k == 1, n
open(dst, 'w').write(s)
