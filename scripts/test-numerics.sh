#!/usr/bin/env bash
# Runs the test suite once per numeric variant of the CPU kernels and reports, for every numeric
# tolerance check, its bound, the largest difference any variant showed and the margin between
# them (tests/test_util.h: the checks append to $CUSET_TOLERANCE_LOG).
#
#   scripts/test-numerics.sh [--variants a,b,...] [--out DIR] [--no-setup] [--min-margin M] [CTEST ARGS...]
#
# Variants (default: all but avx512, plus avx512 where the CPU has AVX-512F):
#   default   ATEN_CPU_CAPABILITY=default   LibTorch's scalar (non-vectorised) kernels
#   avx2      ATEN_CPU_CAPABILITY=avx2      its AVX2 kernels
#   avx512    ATEN_CPU_CAPABILITY=avx512    its AVX-512 kernels
#   mkl-avx2  MKL_ENABLE_INSTRUCTIONS=AVX2  MKL's (GEMM) AVX2 code path
#   omp1      OMP_NUM_THREADS=1             one thread: every reduction split once
#   omp2      OMP_NUM_THREADS=2             two threads
# Every process of a run inherits its variant, the cuset-train processes tests start included.
# Tests that set their own thread count (train.threads, at::set_num_threads) keep it.
# CTEST ARGS go to every ctest run (e.g. -R Objective, -E golden_); CUSET_TEST_JOBS sets -j
# (default 2), CUSET_BUILD_DIR the build folder (default build).
# Per variant: DIR/<variant>.tsv (the checks), DIR/<variant>.ctest.log. DIR defaults to
# <build>/numerics. Exit status 0 only when every variant's ctest passed, every check passed and
# every check's margin (bound / largest observed difference; 0 observed = infinite) is at least
# --min-margin (default 10).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${CUSET_BUILD_DIR:-build}"
OUT=""
SETUP=1
MIN_MARGIN=10
VARIANTS=""
CTEST_ARGS=()
while (($#)); do
  case "$1" in
    --variants) VARIANTS="$2"; shift 2 ;;
    --variants=*) VARIANTS="${1#*=}"; shift ;;
    --out) OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#*=}"; shift ;;
    --no-setup) SETUP=0; shift ;;
    --min-margin) MIN_MARGIN="$2"; shift 2 ;;
    --min-margin=*) MIN_MARGIN="${1#*=}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; CTEST_ARGS+=("$@"); break ;;
    *) CTEST_ARGS+=("$1"); shift ;;
  esac
done

variant_env() {
  case "$1" in
    default) echo "ATEN_CPU_CAPABILITY=default" ;;
    avx2) echo "ATEN_CPU_CAPABILITY=avx2" ;;
    avx512) echo "ATEN_CPU_CAPABILITY=avx512" ;;
    mkl-avx2) echo "MKL_ENABLE_INSTRUCTIONS=AVX2" ;;
    omp1) echo "OMP_NUM_THREADS=1" ;;
    omp2) echo "OMP_NUM_THREADS=2" ;;
    *) return 1 ;;
  esac
}

if [[ -z "$VARIANTS" ]]; then
  VARIANTS="default,avx2,mkl-avx2,omp1,omp2"
  # AVX-512 kernels only where the CPU runs them (LibTorch does not check the requested level).
  if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then VARIANTS="default,avx2,avx512,mkl-avx2,omp1,omp2"; fi
fi
IFS=',' read -r -a VARIANT_LIST <<< "$VARIANTS"
for v in "${VARIANT_LIST[@]}"; do
  variant_env "$v" >/dev/null || { echo "unknown variant '$v' (default avx2 avx512 mkl-avx2 omp1 omp2)" >&2; exit 2; }
done

if ((SETUP)); then scripts/setup.sh; fi
PYTHON="$ROOT/.venv/bin/python"
[[ -x "$PYTHON" ]] || { echo "no $PYTHON: run scripts/setup.sh" >&2; exit 2; }
OUT="${OUT:-$BUILD_DIR/numerics}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

status_args=()
t_all=$(date +%s)
for v in "${VARIANT_LIST[@]}"; do
  assignment="$(variant_env "$v")"
  log="$OUT/$v.tsv"
  rm -f "$log"
  : > "$log"
  echo "[numerics] variant $v ($assignment): ctest ${CTEST_ARGS[*]:-}" >&2
  t0=$(date +%s)
  rc=0
  env "$assignment" CUSET_TOLERANCE_LOG="$log" \
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${CUSET_TEST_JOBS:-2}" "${CTEST_ARGS[@]}" \
    > "$OUT/$v.ctest.log" 2>&1 || rc=$?
  t1=$(date +%s)
  summary="$(grep -E 'tests passed|tests failed' "$OUT/$v.ctest.log" | tail -n 1 || true)"
  echo "[numerics] variant $v: ctest exit $rc, $((t1 - t0)) s, ${summary:-no summary}" >&2
  status_args+=("$v=$rc=$((t1 - t0))")
done
echo "[numerics] all variants: $(($(date +%s) - t_all)) s" >&2

exec "$PYTHON" scripts/tolerance-report.py --out "$OUT" --min-margin "$MIN_MARGIN" "${status_args[@]}"
