#!/usr/bin/env bash
# Builds the Python package (CPU backend only, to keep the build short) into a virtual environment
# under build/python-venv and runs the Python test suite. Installs numpy, pytest, torch, timm and
# diffusers (and matplotlib for the benchmark plots) from PyPI so the PyTorch, integration and
# benchmark tests run too; CUDA tests skip without a GPU. pip keeps no cache: PyPI's torch brings
# several GB of CUDA wheels, and a cached copy would nearly double the disk a CI run needs.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --no-cache-dir --upgrade pip
"$venv/bin/python" -m pip install -q --no-cache-dir numpy pytest scikit-build-core nanobind torch timm diffusers matplotlib
FLASHVISION_CUDA=OFF "$venv/bin/python" -m pip install -q --no-cache-dir --no-build-isolation .
"$venv/bin/python" -m pytest tests/python -q
