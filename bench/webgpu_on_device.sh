#!/bin/bash
# The WebGPU bench on a GPU machine that reaches no package registry. Prepared here, carried as .gl and .gpu:
#   .gl/   the Vulkan loader debs (libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2, apt-get download)
#   .gpu/  deno.xz (xz -6 of the deno binary), bench.js.xz (deno bundle bench/bench.ts, then xz), and the two
#          tfjs-backend-wasm*.wasm.xz files of node_modules/@tensorflow/tfjs-backend-wasm/dist (a bundle finds them
#          beside itself)
# Writes $OUT/bench-webgpu-calls.json and $OUT/bench-webgpu-calls-stock.json (the same steps with latentlab's kernels
# and with TF.js's own, side by side on this GPU: step times and WebGPU calls per step),
# $OUT/bench-webgpu.json (the model list of docs/performance.md's bench-webgpu section),
# $OUT/bench-webgpu-tta.json (--only tta), $OUT/bench-webgpu-cebra.json (--only cebra) and
# $OUT/bench-webgpu-firevnet.json (--only firevnet).
set -e
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/b
xz -dc .gpu/deno.xz >/tmp/b/deno
chmod +x /tmp/b/deno
for f in .gpu/*.xz; do
  case $f in *deno.xz) ;; *) xz -dc "$f" >"/tmp/b/$(basename "$f" .xz)" ;; esac
done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
cd /tmp/b
CALLS=conv-vae-64,conv-vae-32,mlp-vae-64,mnist-cnn,bncnn-train-step-128,tent-step-128
./deno run -A bench.js --backend webgpu --torch off --models $CALLS --rounds 4 --webgpu_steps 20 \
  --json "$OUT/bench-webgpu-calls.json"
./deno run -A bench.js --backend webgpu --torch off --models $CALLS --rounds 4 --webgpu_steps 20 \
  --webgpu_kernels stock --json "$OUT/bench-webgpu-calls-stock.json"
./deno run -A bench.js --backend webgpu --torch off \
  --models conv-vae-64,conv-vae-32,mlp-vae-64,mnist-cnn,ant-step,conv-encoder-infer,cnn-regressor-32,mlp-regressor-32,abs-inference,abs-cnn-input-grad \
  --json "$OUT/bench-webgpu.json"
./deno run -A bench.js --backend webgpu --torch off --only tta --json "$OUT/bench-webgpu-tta.json"
./deno run -A bench.js --backend webgpu --torch off --only cebra --json "$OUT/bench-webgpu-cebra.json"
./deno run -A bench.js --backend webgpu --torch off --only firevnet --json "$OUT/bench-webgpu-firevnet.json"
