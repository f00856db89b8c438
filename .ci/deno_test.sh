#!/usr/bin/env bash
# Runs the test suite, or with `webgpu` the tests of tests/webgpu/ (`deno task test-webgpu`, on a WebGPU adapter:
# Mesa's software Vulkan one without a GPU). The deno process has aborted in glibc ("corrupted size vs. prev_size in fastbins", exit 134)
# while tearing down, after printing a summary of every test passed; that abort is reported loudly and does not fail
# the run, any other failure does.
set -uo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
batches=tests/.batches
# The tests' temporary run stores, sweeps and browser profiles go to a folder of this run's own, removed at the end.
TMPDIR="$(mktemp -d)"
export TMPDIR
trap 'rm -f "$log"; rm -rf "$batches" "$TMPDIR"' EXIT

if [ "${1:-}" = webgpu ]; then
  export DENO_WEBGPU_BACKEND="${DENO_WEBGPU_BACKEND:-vulkan}"
  files=(tests/webgpu/smoke_webgpu_1_test.ts tests/webgpu/smoke_webgpu_2_test.ts tests/webgpu/step_calls_test.ts)
  for f in tests/webgpu/*_test.ts; do [[ " ${files[*]} " == *" $f "* ]] || files+=("$f"); done
  jobs=2
else
  jobs=3
# Longest first (measured per file), so that the short files fill the gaps while the long ones run. A name here that
# no longer exists is skipped.
longest=(
  tests/experiments/smoke_2_test.ts tests/experiments/smoke_1_test.ts tests/experiments/smoke_4_test.ts
  tests/experiments/smoke_3_test.ts tests/e2e/dashboard_live_test.ts tests/reliability/writers_test.ts
  tests/e2e/dashboard_test.ts tests/models/dislib_vae_test.ts tests/experiments/ica_toy_test.ts
  tests/sweep/slurm_test.ts tests/experiments/self_learning_test.ts tests/experiments/vae_dsprites_test.ts
)
files=()
for f in "${longest[@]}"; do [ -f "$f" ] && files+=("$f"); done

# The other files run in batches of modules that share one isolate: loading TF.js, the wasm backend and the
# project's modules costs each isolate most of a CPU-second, which these short files would otherwise pay one by one.
# tests/webgpu/ is `deno task test-webgpu`'s, which .ci/run runs after this suite (it needs a WebGPU adapter).
# A file joins a batch when it selects no backend or only wasm, at its top level (backend selections queue, so the
# batch's modules agree); one that chooses another backend, switches backends or runs an experiment on another
# backend runs alone, since the backend a test leaves active is the next test's.
rm -rf "$batches" && mkdir -p "$batches"
batch_count=6
i=0
alone=()
while IFS= read -r f; do
  case " ${longest[*]} " in *" $f "*) continue ;; esac
  selections="$(grep -c 'selectBackend(\|setBackend(' "$f")"
  if grep -Eq -- '"--backend", "(cpu|webgpu|auto)"|--backend (cpu|webgpu|auto)' "$f"; then
    alone+=("$f")
  elif [ "$selections" = 0 ] || { [ "$selections" = 1 ] && grep -qx 'await selectBackend("wasm");' "$f"; }; then
    echo "import \"../${f#tests/}\";" >>"$batches/batch_$((i % batch_count + 1))_test.ts"
    i=$((i + 1))
  else
    alone+=("$f")
  fi
done < <(find tests -name '*_test.ts' -not -path "$batches/*" -not -path 'tests/webgpu/*' | LC_ALL=C sort)
for b in "$batches"/*_test.ts; do [ -f "$b" ] && files+=("$b"); done
files+=("${alone[@]}")
fi

# One process loads TF.js and every experiment first: the parallel isolates then find them compiled (V8's code
# cache) instead of each compiling them at once on a fresh clone.
deno run -A main.ts list >/dev/null

DENO_JOBS=$jobs deno test -A --parallel "${files[@]}" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
if [ "$code" -eq 134 ] && sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -Eq '^ok \| [0-9]+ passed \| 0 failed'; then
  echo "warning: deno aborted (exit 134) while exiting, after every test passed; counted as passed" >&2
  exit 0
fi
exit "$code"
