#!/usr/bin/env bash
# A newcomer's set-up time: each environment built from its lock as on a machine that has never
# installed anything, with uv and with pip, twice each. Every build starts from an empty
# .nox/<environment> and empty pip and uv caches, with no pip or uv configuration (a machine's
# local wheel directory or extra index would make it something else), through
# `nox -s <environment> --install-only`; nox and uv come from a fresh virtual environment.
# Prints per build: seconds, `du -sh` of the environment, the load average when it ended (the
# figures are only as good as the machine is quiet) and the hash of its package list; then
# whether both builds of each installed the same packages, and the largest installed folders.
# Run from the repository root of a clone (a git checkout: `git clone`):
#     benchmarks/setup_time.sh                       # torch and tensorflow, uv and pip
#     INSTALLERS=uv REPEATS=1 benchmarks/setup_time.sh onnxruntime
# PYTHON (default python3.11) builds the tools' environment; OUT (default
# results/setup_time) keeps each build's log and package list.
set -euo pipefail
envs=("$@")
(( ${#envs[@]} )) || envs=(torch tensorflow)
out=${OUT:-results/setup_time}
mkdir -p "$out"
scratch=$(mktemp -d)
wipe() { chmod -R u+w "$@" 2> /dev/null || true; rm -rf "$@"; }  # virtualenv's are read-only
trap 'wipe "$scratch"' EXIT

# no pip or uv configuration, whatever this machine has (/etc/xdg/pip, PIP_FIND_LINKS, ...)
for variable in $(env | grep -o '^\(PIP\|UV\)_[A-Z_]*'); do unset "$variable"; done
export PIP_CONFIG_FILE=/dev/null UV_NO_CONFIG=1 PIP_DISABLE_PIP_VERSION_CHECK=1

fresh_caches() {  # pip's, uv's and virtualenv's caches and data, empty
    wipe "$scratch/cache" "$scratch/data"
    export XDG_CACHE_HOME="$scratch/cache" XDG_DATA_HOME="$scratch/data"
}

marker_installer() {  # what built it, from the environment's marker (cntk: pip, whatever asked)
    "$scratch/tools/bin/python" -c 'import json, sys
print(json.load(open(sys.argv[1]))["installer"])' ".nox/$1/bench-environment.json"
}

fresh_caches
"${PYTHON:-python3.11}" -m venv "$scratch/tools"
"$scratch/tools/bin/python" -m pip install --quiet nox uv
nox=("$scratch/tools/bin/python" -m nox --download-python never)
uv="$scratch/tools/bin/uv"
echo "nox $("${nox[@]}" --version 2>&1), $("$uv" --version), $(nproc) CPUs:" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
row='%-12s %-4s %-3s %8s %6s  %-16s  %s\n'
# shellcheck disable=SC2059
printf "$row" environment with run seconds size "load 1/5/15 min" packages

for env in "${envs[@]}"; do
    for installer in ${INSTALLERS:-uv pip}; do
        backend=uv; [[ $installer == pip ]] && backend=virtualenv
        for run in $(seq 1 "${REPEATS:-2}"); do
            wipe ".nox/$env"
            fresh_caches
            log="$out/$env-$installer-$run"
            start=$(date +%s)
            "${nox[@]}" -db "$backend" -s "$env" --install-only > "$log.log" 2>&1 \
                || { echo "$env with $installer, run $run: failed, see $log.log"; continue; }
            seconds=$(( $(date +%s) - start ))
            load=$(cut -d' ' -f1-3 /proc/loadavg)
            size=$(du -sh ".nox/$env" | cut -f1)
            # one listing for both installers (uv's reads any environment); the project's
            # editable packages are listed by path
            "$uv" pip freeze --python ".nox/$env/bin/python" 2> /dev/null > "$log.freeze"
            # shellcheck disable=SC2059
            printf "$row" "$env" "$(marker_installer "$env")" "$run" "$seconds" "$size" "$load" \
                "$(sha256sum < "$log.freeze" | cut -c1-12)"
        done
        if (( ${REPEATS:-2} > 1 )); then
            if cmp -s "$out/$env-$installer-1.freeze" "$out/$env-$installer-2.freeze"; then
                echo "$env with $installer: both builds installed the same packages"
            else
                echo "$env with $installer: the builds differ:"
                diff "$out/$env-$installer-1.freeze" "$out/$env-$installer-2.freeze" || true
            fi
        fi
    done
    site=$(echo ".nox/$env"/lib/python3*/site-packages)
    echo "$env: largest installed folders: $(du -s "$site"/* | sort -rn | head -5 \
        | while read -r kb path; do printf '%s %s MB, ' "${path##*/}" $((kb / 1024)); done)"
    if [[ $env == *torch ]]; then
        echo "$env: $(".nox/$env/bin/python" -c 'import torch
print("torch", torch.__version__, "CUDA", torch.version.cuda)')"
    fi
done
