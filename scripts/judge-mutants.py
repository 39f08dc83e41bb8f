#!/usr/bin/env python3
"""Mutants of a tasks file's reference programs, for measuring how often a judge passes a wrong
program (its false-pass rate): each reference (bench.cu) is changed once: a program with a block barrier loses its
first one, the others take the three other rules in turn (the next rule when one does not
apply); the mutants are written as a CUDABench results file that `cuset-train eval --results`
judges:

  barrier   the first block barrier in a kernel (__syncthreads(), cg::sync(g), g.sync()) is removed
  bounds    the first bounds check of a kernel is dropped: `if (c) return;` goes, `if (c)` becomes
            `if (true)` (c compares an index with a size)
  index     a wrong index: the first `blockIdx.x * blockDim.x` becomes `blockIdx.x * (blockDim.x - 1)`
  launch    an off-by-one launch: the first launch's grid gets one block fewer

A mutant the judge does not pass is caught; one it passes is a false pass, unless the mutation
changes nothing the task checks (an equivalent mutant: a bounds check that the sizes never need).

  scripts/judge-mutants.py TASKS.jsonl OUT_RESULTS.jsonl [--only-ids FILE] [--manifest OUT.json]

--only-ids: a file of task ids (one per line, or an eval.json whose passing samples to use).
--manifest: which rule each task's mutant got."""
import json
import re
import sys

KERNEL = re.compile(r'__global__\s')


def matching_brace(s, i):
    """Index of the } closing the { at i (comments and literals skipped), or -1."""
    depth = 0
    n = len(s)
    while i < n:
        c = s[i]
        if s.startswith('//', i):
            j = s.find('\n', i)
            i = n if j < 0 else j
            continue
        if s.startswith('/*', i):
            j = s.find('*/', i + 2)
            i = n if j < 0 else j + 2
            continue
        if c in '"\'':
            j = i + 1
            while j < n and s[j] != c:
                j += 2 if s[j] == '\\' else 1
            i = j + 1
            continue
        if c == '{':
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def kernel_bodies(src):
    """(start, end) of each __global__ function's body, braces included."""
    out = []
    for m in KERNEL.finditer(src):
        b = src.find('{', m.end())
        semi = src.find(';', m.end())
        if b < 0 or (0 <= semi < b):
            continue
        e = matching_brace(src, b)
        if e > 0:
            out.append((b, e + 1))
    return out


def in_kernels(src, pattern):
    for b, e in kernel_bodies(src):
        m = pattern.search(src, b, e)
        if m:
            return m
    return None


def mutate_barrier(src):
    m = in_kernels(src, re.compile(r'(__syncthreads\(\)|\bcg::sync\([^;]*\)|\b\w+\.sync\(\))\s*;'))
    return None if not m else src[:m.start()] + '/* barrier removed */' + src[m.end():]


BOUNDS_RETURN = re.compile(r'if\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*return\s*;')
BOUNDS_IF = re.compile(r'if\s*\(([^()]*(?:\([^()]*\)[^()]*)*[<>]=?[^()]*(?:\([^()]*\)[^()]*)*)\)')


def mutate_bounds(src):
    m = in_kernels(src, BOUNDS_RETURN)
    if m and re.search(r'[<>]', m.group(1)):
        return src[:m.start()] + '/* bounds check dropped */' + src[m.end():]
    m = in_kernels(src, BOUNDS_IF)
    if m:
        return src[:m.start()] + 'if (true /* bounds check dropped */)' + src[m.end():]
    return None


def mutate_index(src):
    m = in_kernels(src, re.compile(r'blockIdx\.x\s*\*\s*blockDim\.x'))
    if m:
        return src[:m.start()] + 'blockIdx.x * (blockDim.x - 1)' + src[m.end():]
    m = in_kernels(src, re.compile(r'blockDim\.x\s*\*\s*blockIdx\.x'))
    if m:
        return src[:m.start()] + '(blockDim.x - 1) * blockIdx.x' + src[m.end():]
    return None


LAUNCH = re.compile(r'<<<\s*([^,<>]+?)\s*,')
HELPER = ('\n// judge-mutants: one block fewer\n'
          'template <class T> static T judge_mutant_fewer(T g) { return g - 1; }\n'
          'static dim3 judge_mutant_fewer(dim3 g) { g.x -= 1; return g; }\n')


def mutate_launch(src):
    m = LAUNCH.search(src)
    if not m:
        return None
    body = src[:m.start(1)] + 'judge_mutant_fewer(' + m.group(1) + ')' + src[m.end(1):]
    # after the last #include, so that dim3 is declared
    inc = list(re.finditer(r'^\s*#\s*include[^\n]*\n', body, re.M))
    at = inc[-1].end() if inc else 0
    if not inc:
        body = '#include <cuda_runtime.h>\n' + body
        at = len('#include <cuda_runtime.h>\n')
    return body[:at] + HELPER + body[at:]


RULES = [('barrier', mutate_barrier), ('bounds', mutate_bounds), ('index', mutate_index), ('launch', mutate_launch)]


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    tasks_file, out_file = args[0], args[1]
    only, manifest_file = None, None
    i = 2
    while i < len(args):
        if args[i] == '--only-ids' and i + 1 < len(args):
            text = open(args[i + 1]).read()
            try:
                rep = json.loads(text)
                only = {str(t['id']) for t in rep['tasks'] if t['samples'] and t['samples'][0]['status'] == 'pass'}
            except (ValueError, KeyError, TypeError):
                only = {line.strip() for line in text.splitlines() if line.strip()}
            i += 2
        elif args[i] == '--manifest' and i + 1 < len(args):
            manifest_file = args[i + 1]
            i += 2
        else:
            print('judge-mutants: unknown argument %r' % args[i], file=sys.stderr)
            return 2
    manifest = {}
    n = 0
    with open(out_file, 'w') as out:
        for k, line in enumerate(open(tasks_file)):
            if not line.strip():
                continue
            t = json.loads(line)
            if only is not None and str(t['id']) not in only:
                continue
            src = t['bench.cu']
            # A program with a barrier loses it; the others take the three other rules in turn.
            order = [RULES[0]] + [RULES[1 + (n + j) % 3] for j in range(3)]
            for name, rule in order:
                mutant = rule(src)
                if mutant is not None and mutant != src:
                    break
            else:
                manifest[str(t['id'])] = None
                continue
            n += 1
            manifest[str(t['id'])] = name
            out.write(json.dumps({'id': t['id'], 'task_name': t['task_name'], 'prompt': '', 'run_id': 'mutants0',
                                  'code1': mutant, 'response1': '```cuda\n' + mutant + '\n```'},
                                 ensure_ascii=False) + '\n')
    if manifest_file:
        json.dump(manifest, open(manifest_file, 'w'), indent=1)
    counts = {}
    for v in manifest.values():
        counts[v] = counts.get(v, 0) + 1
    print('judge-mutants: %d mutants written to %s (%s)' % (n, out_file,
          ', '.join('%s %d' % (k if k else 'no rule applies', v) for k, v in sorted(counts.items(), key=str))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
