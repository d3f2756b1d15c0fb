#!/usr/bin/env bash
# DenseNet-121 at devices=1 against devices=2 on this machine, every framework that trains it
# data-parallel, at the same global batch (16 at 64 x 64: 1 x 16 or 2 x 8), two alternating
# rounds (ROUNDS=n); prints s/step of the second (steady) epoch; XLA's frameworks (flax,
# keras_jax) compile DenseNet-121's step for minutes per run on a CPU. Run from the repository root on a quiet
# machine, with the frameworks' environments built (nox -s <session> --install-only):
#     FWS="torch gluon" ROUNDS=1 benchmarks/densenet_devices.sh
set -u
python=${PYTHON:-python}
out=${OUT:-results/densenet_devices}
mkdir -p "$out"
SIZES="task=densenet preset=smoke task.image_size=64 preset.train_examples=128
       preset.test_examples=64 preset.epochs=2"
for fw in ${FWS:-torch tensorflow gluon mxnet chainer cntk paddle flax keras_jax}; do
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for devices in 1 2; do
      run="$out/$fw-devices$devices-round$round"
      # shellcheck disable=SC2086
      "$python" -m bench framework="$fw" devices="$devices" task.batch_size=$((16 / devices)) \
          $SIZES hydra.run.dir="$run" > "$run.log" 2>&1
      "$python" - "$fw" "$devices" "$round" "$run/result.json" <<'PY'
import json, sys
fw, devices, rnd, path = sys.argv[1:]
try:
    r = json.load(open(path))
except (OSError, ValueError) as exc:
    sys.exit(print(f"{fw} devices={devices} round={rnd}: no result ({exc})"))
s = r.get("stats") or {}
step = s["steady_epoch_seconds"] / r["batches_per_epoch"] if r["status"] == "ok" else None
print(f"{fw} devices={devices} round={rnd} {r['status']}: "
      + (f"{step:.3f} s/step, launch {r['distributed'].get('launch')}, "
         f"mean AUC {r['accuracy']:.3f}" if step else r.get("error", "")))
PY
    done
  done
done
