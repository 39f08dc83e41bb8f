#!/usr/bin/env python3
"""Golden outputs of the emulator's source rewrite (cuset::emu::transform_program, tests/emu):
the original Python rewrite, kept here as the independent reference the C++ port must equal
character for character. It rewrites a CUDA program so that it compiles as plain C++ against the
cuemu runtime (src/emu/runtime/cuemu.h): `k<<<cfg>>>(args)` becomes
`cuemu::Launch(cfg).args(args).go([&]{ k(args); })` (without `.args(args)` when the list is
empty or holds a brace), `extern __shared__ T s[];` becomes a pointer to the
block's dynamic shared memory, and cudaLaunch[Cooperative]Kernel calls become typed
cuemu::launch_args calls. The data set's metadata comment is blanked out.
  emu_transform.py OUT_DIR [FILE.cu...]   (default: data/cuda-sft/src/*.cu)
writes OUT_DIR/<stem>.cpp for each program (OUT_DIR/<stem>.error with the exception when the
rewrite fails) and OUT_DIR/list.txt with the stems."""
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

def split_top(s, sep=','):
    parts, depth, cur = [], 0, ''
    for c in s:
        if c in '([{<':
            depth += 1
        elif c in ')]}>':
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += c
    parts.append(cur)
    return parts

SHARED_DECL = re.compile(r'__shared__\s+(?!.*\(\))([^;{}()]*?);')

def poison_static_shared(src):
    """After each static `__shared__` declaration, poison the variables (NaN bytes) the first time
    a thread of the block reaches it, as a GPU leaves shared memory uninitialised."""
    out, pos = [], 0
    mask = code_mask(src)
    for m in SHARED_DECL.finditer(src):
        if not mask[m.start()] or src[:m.start()].rstrip().endswith('extern'):
            continue
        decl = m.group(1)
        words = split_top(decl)
        # the type is what precedes the first declarator's name
        first = re.match(r'(.*?)(\w+)\s*(\[.*\])?\s*$', words[0].strip(), re.S)
        if not first:
            continue
        names = [first.group(2)] + [re.match(r'\s*(\w+)', w).group(1) for w in words[1:]]
        out.append(src[pos:m.end()])
        out.append(''.join(f' cuemu::poison_shared(&{n}, sizeof({n}));' for n in names))
        pos = m.end()
    out.append(src[pos:])
    return ''.join(out)

def transform(src):
    m = re.match(r'/\*@prompt\n.*?\n@\*/\n', src, re.S)
    if m:
        src = '\n' * m.group(0).count('\n') + src[m.end():]
    src = poison_static_shared(src)
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
        checked = f'.args{args}' if args[1:-1].strip(' \t\n') and '{' not in args else ''
        out.append(f'cuemu::Launch({cfg}){checked}.go([&]{{ {kernel}{args}; }})')
        pos = close + 1
    out.append(src[pos:])
    return ''.join(out)

def main():
    import glob
    import os
    out = sys.argv[1]
    files = sys.argv[2:] or sorted(glob.glob("data/cuda-sft/src/*.cu"))
    os.makedirs(out, exist_ok=True)
    stems = []
    for f in files:
        stem = os.path.splitext(os.path.basename(f))[0]
        stems.append(stem)
        with open(f, encoding="utf-8") as fh:
            src = fh.read()
        try:
            text, ext = transform(src), ".cpp"
        except Exception as e:  # the C++ port throws where the reference fails
            text, ext = f"{type(e).__name__}: {e}\n", ".error"
        with open(os.path.join(out, stem + ext), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    with open(os.path.join(out, "list.txt"), "w", encoding="utf-8") as fh:
        fh.write("".join(s + "\n" for s in stems))
    print(f"emu_transform: {len(stems)} programs rewritten into {out}")


if __name__ == '__main__':
    main()
