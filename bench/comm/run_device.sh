#!/usr/bin/env bash
# The GPU run of `llmbench probe comm` (docs/communication.md), for a machine
# with GPUs, the CUDA driver and PyTorch. Usage, from the repository root:
#   bench/comm/run_device.sh [LLMBENCH] [OUT_DIR]
# LLMBENCH: the binary (default build/ci/llmbench; bench/comm/pack.sh puts one with its Debian
# libraries into build/devrun/comm for a machine that lacks them). OUT_DIR default comm-run.
# It runs, with NVLink multicast off (NCCL_NVLS_ENABLE=0 and PyTorch's and NVSHMEM's switches):
#  1. `llmbench probe comm` over every GPU (all four collectives, BF16 and FP8, 4 KB..1 GB), with
#     the NCCL and CUDA runtime that PyTorch loads, writing OUT_DIR/comm.json;
#  2. torch.distributed's NCCL all-reduce of the same sizes, one process per GPU
#     (bench/comm/torch_allreduce.py);
#  3. both side by side with their ratio per size and the acceptance checks (bench/comm/compare.py);
#  4. on 8 GPUs, `simulate` of DeepSeek-R1 TP8 at 1024/1024 with and without the calibration file.
# On one GPU the probe's message and exit code 2 are shown and nothing else runs.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
llmbench="${1:-$root/build/ci/llmbench}"
out="${2:-comm-run}"
py="${PYTHON:-python3}"
mkdir -p "$out"
bindir="$(dirname "$llmbench")"
export LD_LIBRARY_PATH="$bindir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LLMBENCH_DATA_DIR="$root/data"

# The NCCL and CUDA runtime PyTorch itself loads (bench/comm/torch_libs.py), and the GPU count.
read -r nccl cudart gpus < <("$py" "$here/torch_libs.py" || echo "- - 0")
echo "GPUs: $gpus; NCCL: $nccl; CUDA runtime: $cudart (as PyTorch loads them; - = not found)"
nvidia-smi -L || true
probe_libs=()
[[ "$nccl" != - ]] && probe_libs+=(--nccl-library "$nccl")
[[ "$cudart" != - ]] && probe_libs+=(--cudart-library "$cudart")

set -o pipefail
"$llmbench" probe comm "${probe_libs[@]}" --dtypes bf16,fp8_e4m3 \
  --calibration-out "$out/comm.json" 2>&1 | tee "$out/probe.log"
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  echo "llmbench probe comm exited $rc (2: nothing can be measured here, as its message says)"
  exit "$rc"
fi

"$py" -m torch.distributed.run --standalone --nproc_per_node="$gpus" "$here/torch_allreduce.py" \
  --out "$out/torch.csv" 2>&1 | tee "$out/torch.log"
"$py" "$here/compare.py" "$out/comm.json" "$out/torch.csv" "$gpus" | tee "$out/compare.txt"
verdict=${PIPESTATUS[0]}

if [[ "$gpus" -eq 8 ]]; then
  echo "simulate DeepSeek-R1 TP8 on H200, 1024 in / 1024 out: TPOT without and with $out/comm.json"
  for c in 8 16 32 64; do
    prompts=$((10 * c))
    args=(simulate --random-input-len 1024 --random-output-len 1024 --max-concurrency "$c"
      --num-prompts "$prompts")
    plain=$("$llmbench" "${args[@]}" | awk '/Mean TPOT \(ms\):/ {print $NF; exit}')
    measured=$("$llmbench" "${args[@]}" --calibration "$out/comm.json" |
      awk '/Mean TPOT \(ms\):/ {print $NF; exit}')
    echo "concurrency $c: mean TPOT $plain ms with the datasheet terms, $measured ms measured"
  done | tee "$out/simulate.txt"
  "$llmbench" plan --calibration "$out/comm.json" --batch-tokens 8 --batch-tokens 64 \
    --batch-tokens 512 --batch-tokens 8192 | tee "$out/plan.txt"
fi
exit "$verdict"
