#!/usr/bin/env bash
# Installs what building and testing flashvision needs on a Debian/Ubuntu machine.
# CUDA is optional: when nvcc is on PATH (or in /usr/local/cuda/bin) the GPU backends are built too.
set -euo pipefail
packages=(cmake ninja-build g++ git libgtest-dev python3 python3-venv python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
