#!/usr/bin/env bash
# Session 8, call 1: the Hopper forward's rescale order A/B (call1.sh), then the CPU branch
# wip/cpu-fast16 on the Xeon (.devbin/cpu-fast16/call_short.sh: sd15-self-16 main/branch with
# interleaved rounds, block timing against rounds, the ten image cases once each).
bash .devbin/s8/call1.sh
CPU_LIMIT_S=${CPU_LIMIT_S:-380} bash .devbin/cpu-fast16/call_short.sh
