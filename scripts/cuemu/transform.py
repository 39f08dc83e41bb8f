#!/usr/bin/env python3
"""Rewrites a CUDA program so that it compiles as plain C++ against cuemu (scripts/cuemu/cuemu.h):
`k<<<cfg>>>(args)` becomes `cuemu::Launch(cfg).go([&]{ k(args); })`, `extern __shared__ T s[];`
becomes a pointer to the block's dynamic shared memory, and cudaLaunch[Cooperative]Kernel calls
become typed cuemu::launch_args calls. The data set's metadata comment is blanked out."""
import re, sys

def matching(s, i, open_c, close_c):
    depth = 0
    while i < len(s):
        c = s[i]
        if c == '"':
            i += 1
            while s[i] != '"':
                i += 2 if s[i] == '\\' else 1
        elif c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced")

def kernel_start(s, end):
    i = end
    while s[i - 1].isspace():
        i -= 1
    if s[i - 1] == '>':  # template arguments
        depth = 0
        while True:
            i -= 1
            if s[i] == '>':
                depth += 1
            elif s[i] == '<':
                depth -= 1
                if depth == 0:
                    break
    while i > 0 and (s[i - 1].isalnum() or s[i - 1] in '_:'):
        i -= 1
    return i

def code_mask(s):
    """True for characters outside comments and string/char literals."""
    mask = [True] * len(s)
    i = 0
    while i < len(s):
        if s.startswith('//', i):
            j = s.find('\n', i)
            j = len(s) if j < 0 else j
        elif s.startswith('/*', i):
            j = s.find('*/', i) + 2
        elif s[i] in '"\'':
            q = s[i]
            j = i + 1
            while s[j] != q:
                j += 2 if s[j] == '\\' else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, j):
            mask[k] = False
        i = j
    return mask

def transform(src):
    m = re.match(r'/\*@prompt\n.*?\n@\*/\n', src, re.S)
    if m:
        src = '\n' * m.group(0).count('\n') + src[m.end():]
    src = re.sub(r'extern\s+__shared__\s+([\w\s:<>]+?)\s+(\w+)\s*\[\s*\]\s*;',
                 r'\1* \2 = (\1*)cuemu::dyn_smem();', src)
    src = re.sub(r'cudaLaunchKernel\(\s*\((?:const\s+)?void\s*\*\)\s*(\w+)\s*,', r'cuemu::launch_args(false, \1,', src)
    src = re.sub(r'cudaLaunchCooperativeKernel\(\s*\((?:const\s+)?void\s*\*\)\s*(\w+)\s*,', r'cuemu::launch_args(true, \1,', src)
    out = []
    pos = 0
    while True:
        i = src.find('<<<', pos)
        if i < 0:
            break
        if not code_mask(src)[i]:
            out.append(src[pos:i + 3])
            pos = i + 3
            continue
        ks = kernel_start(src, i)
        j = src.find('>>>', i)
        cfg = src[i + 3:j]
        k = j + 3
        while src[k].isspace():
            k += 1
        assert src[k] == '(', src[i - 40:k + 10]
        close = matching(src, k, '(', ')')
        kernel = src[ks:i].strip()
        args = src[k:close + 1]
        out.append(src[pos:ks])
        out.append(f'cuemu::Launch({cfg}).go([&]{{ {kernel}{args}; }})')
        pos = close + 1
    out.append(src[pos:])
    return ''.join(out)

if __name__ == '__main__':
    sys.stdout.write(transform(open(sys.argv[1]).read()))
